package site

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/placement"
	"github.com/baton-dr/baton/storage/replication"
)

var now = time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC)

// reasons is "Type=Status/Reason ..." of conditions, for compact tables.
func reasons(conditions []metav1.Condition) string {
	out := ""
	for _, c := range conditions {
		out += c.Type + "=" + string(c.Status) + "/" + c.Reason + " "
	}
	return out
}

func TestVolumeConditions(t *testing.T) {
	successor := chain.Ref{Cluster: "bbbbbbbb-0000-4000-8000-00000000000b", Volume: "b0000000-0000-4000-8000-000000000002"}
	active := core.Volume{Member: chain.Member{State: chain.Active}, Shape: core.Shape{PlaceCount: 2},
		Present: []string{"a1", "a2"}, Allocation: placement.Allocation{Replicas: []placement.Replica{{Node: "a1"}, {Node: "a2"}}}}
	with := func(change func(*core.Volume)) core.Volume {
		v := active
		change(&v)
		return v
	}
	shipping := &core.Pairing{Pairing: replication.Pairing{Target: "b", Interval: time.Minute, Phase: replication.Idle}}
	failing := &core.Pairing{Pairing: replication.Pairing{Target: "b", Phase: replication.Shipping, Failures: 2, LastError: "refused"}}
	paused := &core.Pairing{Pairing: replication.Pairing{Phase: replication.Paused, Failures: 1}}
	cases := []struct {
		name    string
		volume  core.Volume
		pairing *core.Pairing
		want    string
	}{
		{"an attached, unprotected volume", active, nil,
			"Ready=True/Ready Replicating=False/NotReplicated Degraded=False/AsExpected "},
		{"a protected volume", active, shipping,
			"Ready=True/Ready Replicating=True/Replicating Degraded=False/AsExpected "},
		{"shipments fail", active, failing,
			"Ready=True/Ready Replicating=True/Replicating Degraded=True/SyncFailed "},
		{"one node lost the data", with(func(v *core.Volume) { v.Present = []string{"a1"} }), shipping,
			"Ready=True/Ready Replicating=True/Replicating Degraded=True/ReplicaMissing "},
		{"a split brain, while shipments fail too", with(func(v *core.Volume) { v.StandAlone = []string{"a2"} }), failing,
			"Ready=True/Ready Replicating=True/Replicating Degraded=True/SplitBrain "},
		{"no node reported yet", with(func(v *core.Volume) { v.Present = nil }), nil,
			"Ready=False/Provisioning Replicating=False/NotReplicated Degraded=False/AsExpected "},
		{"superseded", with(func(v *core.Volume) { v.State, v.Successor = chain.Demoted, successor }), paused,
			"Ready=False/Demoted Replicating=False/ReplicationPaused Degraded=False/AsExpected "},
		{"demoted for a relocation", with(func(v *core.Volume) { v.State = chain.Demoted }), shipping,
			"Ready=False/Demoted Replicating=True/Replicating Degraded=False/AsExpected "},
		{"reaped", with(func(v *core.Volume) { v.State = chain.Tombstone }), nil,
			"Ready=False/Tombstone Replicating=False/NotReplicated Degraded=False/AsExpected "},
		{"being deleted", with(func(v *core.Volume) { v.Deleting = true }), nil,
			"Ready=False/Deleting Replicating=False/NotReplicated Degraded=False/AsExpected "},
	}
	for _, c := range cases {
		if got := reasons(volumeConditions(c.volume, c.pairing)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestReplicationPhaseAndConditions(t *testing.T) {
	base := core.Pairing{Pairing: replication.Pairing{Target: "b", Interval: time.Minute, Phase: replication.Idle,
		Last:      replication.Sync{At: now.Add(-time.Minute), Snapshot: "baton-000002"},
		Snapshots: []replication.Snapshot{{Name: "baton-000002", GUID: "2", TakenAt: now.Add(-70 * time.Second), ShippedAt: now.Add(-time.Minute)}}},
		Receivers: []core.Receiver{{Node: "b1"}}}
	with := func(change func(*core.Pairing)) core.Pairing {
		p := base
		change(&p)
		return p
	}
	cases := []struct {
		name    string
		pairing core.Pairing
		phase   v1.ReplicationPhase
		want    string
	}{
		{"in sync", base, v1.ReplicationInSync, "Ready=True/Ready InSync=True/InSync Degraded=False/AsExpected "},
		{"a delta on its way", with(func(p *core.Pairing) { p.Phase = replication.Shipping }), v1.ReplicationSyncing,
			"Ready=True/Ready InSync=True/InSync Degraded=False/AsExpected "},
		{"never shipped, target away", with(func(p *core.Pairing) { p.Last, p.Snapshots, p.Receivers = replication.Sync{}, nil, nil }),
			v1.ReplicationEnabled, "Ready=False/TargetUnreachable InSync=False/Syncing Degraded=False/AsExpected "},
		{"shipments fail", with(func(p *core.Pairing) { p.Failures, p.LastError = 3, "refused" }), v1.ReplicationDegraded,
			"Ready=True/Ready InSync=False/SyncFailed Degraded=True/SyncFailed "},
		{"behind by more than three intervals", with(func(p *core.Pairing) { p.Last.At = now.Add(-4 * time.Minute) }), v1.ReplicationDegraded,
			"Ready=True/Ready InSync=False/Syncing Degraded=True/Behind "},
		{"re-aimed, the delta not there yet", with(func(p *core.Pairing) { p.ReaimedAt = now.Add(-10 * time.Second) }), v1.ReplicationResyncing,
			"Ready=True/Ready InSync=False/Resyncing Degraded=False/AsExpected "},
		{"re-aimed and in sync again", with(func(p *core.Pairing) { p.ReaimedAt = now.Add(-2 * time.Minute) }), v1.ReplicationInSync,
			"Ready=True/Ready InSync=True/InSync Degraded=False/AsExpected "},
		{"disabled", with(func(p *core.Pairing) { p.Phase = replication.Paused }), v1.ReplicationDisabled,
			"Ready=False/Disabled InSync=True/InSync Degraded=False/Paused "},
	}
	for _, c := range cases {
		if got := replicationPhase(c.pairing, now); got != c.phase {
			t.Errorf("%s: phase %s, want %s", c.name, got, c.phase)
		}
		if got := reasons(replicationConditions(c.pairing, now)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestNodeAndReplicaConditions(t *testing.T) {
	nodes := []struct {
		reported time.Time
		want     string
	}{
		{time.Time{}, "Reachable=False/Unreachable Ready=False/NotReady "},
		{now.Add(-nodeReportTimeout), "Reachable=True/Reachable Ready=True/Ready "},
		{now.Add(-nodeReportTimeout - time.Second), "Reachable=False/Unreachable Ready=False/NotReady "},
	}
	for _, c := range nodes {
		if got := reasons(nodeConditions(core.Node{ReportedAt: c.reported}, now)); got != c.want {
			t.Errorf("reported %s: got %s, want %s", c.reported, got, c.want)
		}
	}
	snap := []core.SnapshotInfo{{Name: "baton-000001"}}
	replicas := []struct {
		replica core.Replica
		want    string
	}{
		{core.Replica{Nodes: []string{"b1", "b2"}, Received: map[string][]core.SnapshotInfo{"b1": snap}}, "Received=False/Waiting "},
		{core.Replica{Nodes: []string{"b1", "b2"}, Received: map[string][]core.SnapshotInfo{"b1": snap, "b2": snap}}, "Received=True/Received "},
		{core.Replica{Nodes: []string{"b1"}, ClonedInto: chain.Ref{Cluster: "c", Volume: "v"}}, "Received=False/Cloned "},
	}
	for _, c := range replicas {
		if got := reasons(replicaConditions(c.replica)); got != c.want {
			t.Errorf("%+v: got %s, want %s", c.replica, got, c.want)
		}
	}
}
