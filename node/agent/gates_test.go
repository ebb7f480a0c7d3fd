package agent_test

import (
	"strings"
	"testing"

	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"

	"github.com/baton-dr/baton/node/agent"
)

// replicator is a test double of DRBD on one node: it reports a scripted
// status and records the calls that change roles.
type replicator struct {
	status backend.ResourceStatus
	calls  []string
}

func (r *replicator) HasMetadata(backend.ResourceConfig) (bool, error) { return true, nil }
func (r *replicator) CreateMetadata(backend.ResourceConfig) error      { return nil }
func (r *replicator) Up(backend.ResourceConfig) error                  { return nil }
func (r *replicator) Down(string) error                                { return nil }
func (r *replicator) Primary(_ string, force bool) error {
	if force {
		r.calls = append(r.calls, "primary --force")
		return nil
	}
	r.calls = append(r.calls, "primary")
	return nil
}
func (r *replicator) Secondary(string) error {
	r.calls = append(r.calls, "secondary")
	return nil
}
func (r *replicator) NewCurrentUUID(string, bool) error { return nil }
func (r *replicator) Show(string) (backend.ResourceConfig, error) {
	return backend.ResourceConfig{}, nil
}
func (r *replicator) Status(string) (backend.ResourceStatus, error) { return r.status, nil }
func (r *replicator) Open(string) (backend.Device, error)           { return nil, backend.ErrRefused }

func drbdAgent(t *testing.T, r *replicator) (*agent.Agent, *simzfs.Pool) {
	t.Helper()
	pool := simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})
	a, err := agent.New(agent.Options{Node: "n1", Cluster: clusterA, Pool: pool, Replicator: r,
		Transport: loopback{}, Clock: &clock{}})
	if err != nil {
		t.Fatal(err)
	}
	return a, pool
}

func drbdVolume(role backend.Role, snapshots ...string) core.VolumeSpec {
	v := volumeSpec("vol-1")
	v.Initialized, v.Role, v.Snapshots = true, role, snapshots
	v.Resource = backend.ResourceConfig{Name: "vol-1", Nodes: []backend.ResourceNode{{Node: "n1"}, {Node: "n2", NodeID: 1}}}
	return v
}

// A resyncing replica is never promoted: should its sync source fail, the
// data would be split between two nodes, neither whole.
func TestAResyncingReplicaIsNotPromoted(t *testing.T) {
	r := &replicator{status: backend.ResourceStatus{Role: backend.Secondary, Disk: backend.Inconsistent,
		Peers: []backend.PeerStatus{{Node: "n2", Connection: backend.Connected, Disk: backend.UpToDate}}}}
	a, _ := drbdAgent(t, r)
	st := a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{drbdVolume(backend.Primary)}})
	if len(r.calls) != 0 || len(st.Errors) != 1 || !strings.Contains(st.Errors[0], "before its resync completes") {
		t.Fatalf("calls %v errors %v: want no promotion and a reason", r.calls, st.Errors)
	}
	r.status.Disk = backend.UpToDate
	a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{drbdVolume(backend.Primary)}})
	if len(r.calls) != 1 || r.calls[0] != "primary" {
		t.Fatalf("calls %v once UpToDate, want the promotion", r.calls)
	}
}

// A Secondary that believes itself UpToDate but lost its peer may be stale:
// no snapshot of it ships as if it held every acknowledged write.
func TestAStaleLookingSecondaryIsNotSnapshotted(t *testing.T) {
	cases := []struct {
		name   string
		status backend.ResourceStatus
		taken  bool
	}{
		{"connected and UpToDate", backend.ResourceStatus{Role: backend.Secondary, Disk: backend.UpToDate,
			Peers: []backend.PeerStatus{{Node: "n2", Connection: backend.Connected, Role: backend.Primary, Disk: backend.UpToDate}}}, true},
		{"cut off from its primary", backend.ResourceStatus{Role: backend.Secondary, Disk: backend.UpToDate,
			Peers: []backend.PeerStatus{{Node: "n2", Connection: backend.StandAlone, Disk: backend.Outdated}}}, false},
		{"resyncing", backend.ResourceStatus{Role: backend.Secondary, Disk: backend.Inconsistent,
			Peers: []backend.PeerStatus{{Node: "n2", Connection: backend.Connected, Role: backend.Primary, Disk: backend.UpToDate}}}, false},
		{"a primary that lost its peer", backend.ResourceStatus{Role: backend.Primary, Disk: backend.UpToDate,
			Peers: []backend.PeerStatus{{Node: "n2", Connection: backend.Connecting, Disk: backend.Outdated}}}, true},
	}
	for _, c := range cases {
		r := &replicator{status: c.status}
		a, pool := drbdAgent(t, r)
		role := backend.Secondary
		if c.status.Role == backend.Primary {
			role = backend.Primary
		}
		a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{drbdVolume(role, "baton-000001")}})
		snaps, _ := pool.Snapshots("vol-1")
		if taken := len(snaps) == 1; taken != c.taken {
			t.Errorf("%s: snapshot taken %v, want %v", c.name, taken, c.taken)
		}
	}
}

// A Primary whose peer is gone is promoted over it -- drbdadm primary --force,
// since no fence-peer handler can vouch for the peer -- only when the site
// says the peer is fenced; otherwise DRBD's own refusal stands.
func TestAMissingPeerIsSkippedOnlyWhenFenced(t *testing.T) {
	cases := []struct {
		name   string
		peer   backend.ConnectionState
		fenced []string
		want   string
	}{
		{"connected peer", backend.Connected, nil, "primary"},
		{"missing peer, not fenced", backend.Connecting, nil, "primary"},
		{"missing peer, fenced", backend.Connecting, []string{"n2"}, "primary --force"},
		{"connected peer, fenced", backend.Connected, []string{"n2"}, "primary"},
		{"missing peer, another fenced", backend.Connecting, []string{"n3"}, "primary"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &replicator{status: backend.ResourceStatus{Role: backend.Secondary, Disk: backend.UpToDate,
				Peers: []backend.PeerStatus{{Node: "n2", Connection: c.peer, Disk: backend.Outdated}}}}
			a, _ := drbdAgent(t, r)
			v := drbdVolume(backend.Primary)
			v.FencedPeers = c.fenced
			a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{v}})
			if len(r.calls) != 1 || r.calls[0] != c.want {
				t.Fatalf("calls %v, want [%s]", r.calls, c.want)
			}
		})
	}
}

// A fenced member's replica that is behind its peer keeps a writable backing
// volume until DRBD has resynced it: a read-only zvol would fail the resync,
// and the replica would never hold what the final snapshot must carry (chaos
// seed 40011). Once UpToDate it is fenced.
func TestAFencedReplicaStaysWritableUntilResynced(t *testing.T) {
	r := &replicator{status: backend.ResourceStatus{Role: backend.Secondary, Disk: backend.Inconsistent,
		Peers: []backend.PeerStatus{{Node: "n2", Connection: backend.Connected, Disk: backend.UpToDate}}}}
	a, pool := drbdAgent(t, r)
	v := drbdVolume(backend.Secondary)
	v.ReadOnly = true
	readOnly := func() bool {
		t.Helper()
		info, err := pool.Volume(v.Dataset)
		if err != nil {
			t.Fatal(err)
		}
		return info.ReadOnly
	}
	a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{v}})
	if readOnly() {
		t.Fatal("a resyncing replica's zvol was made read-only")
	}
	r.status.Disk = backend.UpToDate
	a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{v}})
	if !readOnly() {
		t.Fatal("an UpToDate replica of a fenced member is not read-only")
	}
}
