package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/core"
)

// TestADrillLeavesReplicationAlone runs a test fail-over on B while A keeps
// shipping: the bubble is a root of its own, cloned from the replica's newest
// snapshot, with the source's shape; the chain records no hop, the replica
// stays open, deltas keep arriving, and deleting the bubble removes only it.
func TestADrillLeavesReplicationAlone(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]
	v := w.protect(w.create(a, "vm-disk", core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Block}))
	before := pairingOf(t, a, v.Ref).Last

	bubble, err := b.Drill(core.DrillRequest{Name: "drill-1", Root: v.Ref})
	w.must(err)
	switch {
	case bubble.Root != bubble.Ref || bubble.Generation != 0 || !bubble.Predecessor.IsZero():
		t.Fatalf("bubble %+v is not a root of its own", bubble.Member)
	case bubble.VolumeMode != core.Block || bubble.SizeBytes != v.SizeBytes:
		t.Fatalf("bubble shape %+v, want the source's %+v", bubble.Shape, v.Shape)
	case bubble.Origin.Dataset != (core.Replica{Source: v.Ref}).Dataset() || bubble.Origin.GUID == "" || !bubble.Initialized:
		t.Fatalf("bubble origin %+v initialized=%v, want a snapshot of the replica", bubble.Origin, bubble.Initialized)
	}
	again, err := b.Drill(core.DrillRequest{Name: "drill-1", Root: v.Ref})
	if err != nil || again.Ref != bubble.Ref {
		t.Fatalf("a repeated drill made %s (%v), want %s", again.Ref, err, bubble.Ref)
	}

	w.run(3 * time.Minute)
	if after := pairingOf(t, a, v.Ref).Last; !after.At.After(before.At) {
		t.Fatalf("no delta shipped during the drill: last sync %s, before %s", after.At, before.At)
	}
	if r := w.resolve(v.Ref); r.End().Ref != v.Ref || len(r.Walk) != 1 {
		t.Fatalf("the drill changed the chain: it ends at %s after %d members", r.End().Ref, len(r.Walk))
	}
	if members, _ := b.Members(bubble.Ref); len(members) != 1 {
		t.Fatalf("the bubble's own chain has %d members", len(members))
	}

	w.must(b.DeleteVolume(bubble.Ref))
	w.run(5 * time.Second)
	if _, err := b.Volume(bubble.Ref); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("bubble after its deletion: %v, want ErrNotFound", err)
	}
	if _, err := b.Failover(v.Ref, true); err != nil {
		t.Fatalf("a fail-over after the drill: %v; the replica must stay usable", err)
	}
}

func TestADrillNeedsAnOpenReplicaAndItsSnapshot(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]
	v := createProtected(w)
	lonely := w.create(a, "lonely", core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Filesystem})
	cases := []struct {
		name    string
		request core.DrillRequest
		want    error
	}{
		{"no name", core.DrillRequest{Root: v.Ref}, core.ErrInvalid},
		{"no replica here", core.DrillRequest{Name: "d1", Root: lonely.Ref}, core.ErrNoReplica},
		{"unknown snapshot", core.DrillRequest{Name: "d2", Root: v.Ref, Snapshot: "baton-999999"}, core.ErrNoSnapshot},
	}
	for _, c := range cases {
		if _, err := b.Drill(c.request); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A named snapshot the replica holds is taken as asked.
	received := w.node(clusterB, "b1").Datasets[(core.Replica{Source: v.Ref}).Dataset()]
	if len(received) < 2 {
		t.Fatalf("b1 received %v, want at least two snapshots", received)
	}
	oldest := received[0]
	bubble, err := b.Drill(core.DrillRequest{Name: "d3", Root: v.Ref, Snapshot: oldest.Name})
	w.must(err)
	if bubble.Origin.Snapshot != oldest.Name || bubble.Origin.GUID != oldest.GUID {
		t.Fatalf("bubble cloned %+v, want %+v", bubble.Origin, oldest)
	}
	// Once the replica was failed over it is closed: a drill needs the newer one.
	_, err = b.Failover(v.Ref, true)
	w.must(err)
	if _, err := b.Drill(core.DrillRequest{Name: "d4", Root: v.Ref}); !errors.Is(err, core.ErrNoReplica) {
		t.Fatalf("drill of a failed-over replica: %v, want ErrNoReplica", err)
	}
}
