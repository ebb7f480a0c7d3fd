package agent_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/node/agent"
	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// loopback is a test double of the transport: it hands each stream straight
// to another agent.
type loopback struct{ to *agent.Agent }

func (l loopback) Ship(_ core.Receiver, h agent.StreamHeader, stream io.ReadCloser, done func(uint64, error)) {
	defer stream.Close()
	done(1, l.to.Receive(h, stream))
}

const (
	clusterA chain.ClusterID = "aaaaaaaa-0000-4000-8000-00000000000a"
	clusterB chain.ClusterID = "bbbbbbbb-0000-4000-8000-00000000000b"
)

func newAgent(t *testing.T, pool backend.Pool, cluster chain.ClusterID, transport agent.Transport) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Options{Node: "n1", Cluster: cluster, Pool: pool, Transport: transport,
		Clock: &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func volumeSpec(name string) core.VolumeSpec {
	return core.VolumeSpec{Dataset: name, SizeBytes: 64 << 20, Up: true, Role: backend.Primary}
}

func TestARestartedAgentAdoptsWhatItFinds(t *testing.T) {
	pool := simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})
	first := newAgent(t, pool, clusterA, loopback{})
	spec := core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{volumeSpec("vol-1")}}
	spec.Volumes[0].Snapshots = []string{"baton-000001"}
	if st := first.Reconcile(spec); len(st.Errors) > 0 {
		t.Fatal(st.Errors)
	}
	d, _ := pool.Open("vol-1")
	d.WriteAt([]byte("data"), 0)
	d.Sync()
	d.Close()

	second := newAgent(t, pool, clusterA, loopback{}) // a restart: a fresh agent over the same pool
	spec.Volumes[0].MustExist = true
	st := second.Reconcile(spec)
	if len(st.Errors) > 0 {
		t.Fatal(st.Errors)
	}
	d, _ = pool.Open("vol-1")
	buf := make([]byte, 4)
	d.ReadAt(buf, 0)
	d.Close()
	if string(buf) != "data" {
		t.Fatalf("after the restart vol-1 holds %q: the agent re-created it", buf)
	}
	if len(st.Datasets) != 1 || len(st.Datasets[0].Snapshots) != 1 {
		t.Fatalf("status %+v, want vol-1 with its one snapshot", st.Datasets)
	}
}

func TestAVolumeThatHeldDataIsNeverReprovisionedEmpty(t *testing.T) {
	pool := simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})
	a := newAgent(t, pool, clusterA, loopback{})
	spec := volumeSpec("vol-gone")
	spec.MustExist = true
	st := a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{spec}})
	if len(st.Errors) != 1 || !strings.Contains(st.Errors[0], "refusing to provision it empty") {
		t.Fatalf("errors %v, want a refusal to provision", st.Errors)
	}
	if _, err := pool.Volume("vol-gone"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("the agent created vol-gone: %v", err)
	}
}

// A stream to another site lands in the replica; a fail-over clone starts from
// it; a stream with the wrong token, or for a closed replica, is refused.
func TestStreamsLandOnlyInOpenReplicasWithTheirToken(t *testing.T) {
	poolA := simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})
	poolB := simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 2})
	b := newAgent(t, poolB, clusterB, loopback{})
	a := newAgent(t, poolA, clusterA, loopback{to: b})
	source := chain.Ref{Cluster: clusterA, Volume: "00000000-0000-4000-8000-000000000001"}
	replica := core.ReplicaSpec{Dataset: "rep-1", Source: source, Open: true, Token: "s3cret"}
	b.Reconcile(core.NodeSpec{Node: "n1", Replicas: []core.ReplicaSpec{replica}})

	v := volumeSpec("vol-1")
	v.Snapshots = []string{"baton-000001"}
	a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{v}})
	snaps, _ := poolA.Snapshots("vol-1")
	send := core.SendSpec{Dataset: "vol-1", Snapshot: "baton-000001", GUID: snaps[0].GUID, Target: clusterB,
		TargetDataset: "rep-1", Receivers: []core.Receiver{{Node: "n1", Address: "b/n1", Token: "wrong"}}}
	st := a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{v}, Sends: []core.SendSpec{send}})
	if len(st.Sent) != 1 || !strings.Contains(st.Sent[0].Error, "wrong token") {
		t.Fatalf("a stream with the wrong token: %+v", st.Sent)
	}
	send.Receivers[0].Token = "s3cret"
	st = a.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{v}, Sends: []core.SendSpec{send}})
	if len(st.Sent) != 1 || st.Sent[0].Error != "" {
		t.Fatalf("a stream with the token: %+v", st.Sent)
	}
	got, err := poolB.Snapshots("rep-1")
	if err != nil || len(got) != 1 || got[0].GUID != snaps[0].GUID {
		t.Fatalf("rep-1 on B: %v %v, want the snapshot with GUID %s", got, err, snaps[0].GUID)
	}

	clone := volumeSpec("vol-2")
	clone.Origin = core.Origin{Dataset: "rep-1", Snapshot: "baton-000001", GUID: got[0].GUID}
	replica.Open = false // failed over: the source's streams stop here
	st = b.Reconcile(core.NodeSpec{Node: "n1", Volumes: []core.VolumeSpec{clone}, Replicas: []core.ReplicaSpec{replica}})
	if info, err := poolB.Volume("vol-2"); err != nil || info.Origin != "rep-1@baton-000001" {
		t.Fatalf("fail-over clone: %+v %v %v", info, err, st.Errors)
	}
	if err := b.Receive(agent.StreamHeader{Source: clusterA, Dataset: "rep-1", Token: "s3cret"}, strings.NewReader("")); !errors.Is(err, agent.ErrReplicaClosed) {
		t.Fatalf("a stream into a failed-over replica: %v, want ErrReplicaClosed", err)
	}
}
