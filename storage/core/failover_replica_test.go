package core_test

import (
	"time"

	"testing"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// A relocation's new member cut off before it asked its old site to receive
// anything leaves that site no replica record; a fail-over back there once
// failed for ever with ErrNoReplica (seeds 11, 43, 68, 94 and 100 of the
// moves stories, once seeds varied their timing). It clones the predecessor's
// final snapshot -- the one the new member was cloned from -- and loses only
// the new member's own writes.
func TestAFailoverBackAfterARelocationThatNeverShipped(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]
	v1 := createProtected(w)
	_, err := a.Demote(v1.Ref)
	w.must(err)
	if !resyncUntilReady(w, a, v1.Ref, clusterA) {
		t.Fatal("the final sync never arrived")
	}
	v2, err := b.Failover(v1.Ref, false)
	w.must(err)
	w.cut[clusterB] = true // before B's first tick asks A to receive v2
	if _, found, err := a.Pairing(v1.Ref); err != nil || !found {
		t.Fatalf("A:v1's pairing: found=%v %v", found, err)
	}
	pairing := pairingOf(t, a, v1.Ref)
	final, _ := pairing.NewestShipped()
	v3, err := a.Failover(v2.Ref, true)
	if err != nil {
		t.Fatalf("fail over %s back to A: %v", v2.Ref, err)
	}
	// The clone names its origin by GUID and by the name the node clones
	// from: both must be v1's final snapshot, or the data is another time's.
	if v3.Predecessor != v2.Ref || v3.Generation != 2 || v3.State != chain.Active || v3.Origin.GUID != final.GUID || v3.Origin.Snapshot != final.Name {
		t.Fatalf("clone %+v from %s; want generation 2 after %s, from v1's final snapshot %s",
			v3.Member, v3.Origin.Snapshot, v2.Ref, final.Name)
	}
	again, err := a.Failover(v2.Ref, true)
	if err != nil || again.Ref != v3.Ref {
		t.Fatalf("a repeated fail-over made %s (%v), want the same clone %s", again.Ref, err, v3.Ref)
	}
	w.run(10 * time.Second)
	if end := w.resolve(v1.Ref).End(); end.Ref != v3.Ref {
		t.Fatalf("from A the chain ends at %s, want %s", end.Ref, v3.Ref)
	}
}

// The same fail-over back when the relocation's final snapshot was the
// predecessor's first, demoted before any other was taken: the clone still
// starts from it.
func TestAFailoverBackFromAPredecessorsFirstSnapshot(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]
	v1 := w.create(a, "pvc-young", core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block})
	_, err := a.Enable(v1.Ref, clusterB)
	w.must(err)
	_, err = a.Demote(v1.Ref)
	w.must(err)
	if !resyncUntilReady(w, a, v1.Ref, clusterA) {
		t.Fatal("the final sync never arrived")
	}
	v2, err := b.Failover(v1.Ref, false)
	w.must(err)
	w.cut[clusterB] = true
	pairing := pairingOf(t, a, v1.Ref)
	final, _ := pairing.NewestShipped()
	held, err := a.Volume(v1.Ref)
	w.must(err)
	if len(held.Snapshots) == 0 || held.Snapshots[0].GUID != final.GUID {
		t.Fatalf("v1's snapshots %+v: want its final %s first", held.Snapshots, final.Name)
	}
	v3, err := a.Failover(v2.Ref, true)
	if err != nil || v3.Origin.GUID != final.GUID || v3.Origin.Snapshot != final.Name {
		t.Fatalf("fail over %s back to A: origin %+v, %v; want v1's final snapshot %s", v2.Ref, v3.Origin, err, final.Name)
	}
}

// The same fail-over back, on a site that holds an older member of the
// chain too: A:v1 → B:v2 → A:v3 → B:v4, v4 cut off before it shipped. A
// still holds v1, which lists before v3 and lacks v3's final snapshot;
// the clone starts from v3's, which only v3 holds.
func TestAFailoverBackPassesOverAnOlderMemberOfTheChain(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]
	relocate := func(from, to *core.Site, member chain.Ref) core.Volume {
		t.Helper()
		_, err := from.Demote(member)
		w.must(err)
		if !resyncUntilReady(w, from, member, from.Cluster()) {
			t.Fatalf("the final sync of %s never arrived", member)
		}
		clone, err := to.Failover(member, false)
		w.must(err)
		return clone
	}
	v1 := createProtected(w)
	v2 := relocate(a, b, v1.Ref)
	w.run(3 * time.Minute)
	v3 := relocate(b, a, v2.Ref)
	w.run(3 * time.Minute)
	v4 := relocate(a, b, v3.Ref)
	w.cut[clusterB] = true
	pairing := pairingOf(t, a, v3.Ref)
	final, _ := pairing.NewestShipped()
	volumes, err := a.Store().Volumes()
	w.must(err)
	if len(volumes) < 2 || volumes[0].Ref != v1.Ref {
		t.Fatalf("A lists %d volumes, first %s; want v1 %s before v3", len(volumes), volumes[0].Ref, v1.Ref)
	}
	v5, err := a.Failover(v4.Ref, true)
	if err != nil || v5.Origin.GUID != final.GUID || v5.Origin.Snapshot != final.Name {
		t.Fatalf("fail over %s back to A: origin %+v, %v; want v3's final snapshot %s", v4.Ref, v5.Origin, err, final.Name)
	}
}
