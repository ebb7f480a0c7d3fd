package core_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

// createProtected makes a two-replica filesystem volume on A and protects it.
func createProtected(w *world) core.Volume {
	w.t.Helper()
	return w.protect(w.create(w.sites[clusterA], "pvc-db", core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Filesystem}))
}

// createDemoted is createProtected's volume with A's member demoted, as a
// planned fail-over starts.
func createDemoted(w *world) core.Volume {
	w.t.Helper()
	v := createProtected(w)
	_, err := w.sites[clusterA].Demote(v.Ref)
	w.must(err)
	return v
}

// TestAVolumesLife tells ARCHITECTURE's reference story: create, protect, an
// unplanned fail-over while A is cut off, A's return with demote, resync and
// reaping, a planned relocation back, and twelve more moves.
func TestAVolumesLife(t *testing.T) {
	w := newWorld(t)
	a, b := w.sites[clusterA], w.sites[clusterB]

	// t0, t1: the root on A ships to B.
	v1 := createProtected(w)
	if v1.Generation != 0 || v1.Root != v1.Ref {
		t.Fatalf("t0: %+v is not a root", v1.Member)
	}
	st, err := a.Status(v1.Ref)
	w.must(err)
	if st.Health != core.Healthy || st.LastSyncTime.IsZero() {
		t.Fatalf("t1: status %+v, want a healthy pairing with a sync", st)
	}

	// t2: A is cut off. Without force the fail-over refuses; with force B clones.
	w.cut[clusterA] = true
	if _, err := b.Failover(v1.Ref, false); !errors.Is(err, core.ErrPeerUnreachable) {
		t.Fatalf("t2: fail-over without force while A is cut off: %v, want ErrPeerUnreachable", err)
	}
	v2, err := b.Failover(v1.Ref, true)
	w.must(err)
	if v2.Generation != 1 || v2.Predecessor != v1.Ref || v2.Root != v1.Ref || v2.State != chain.Active {
		t.Fatalf("t2: clone %+v, want generation 1 after %s", v2.Member, v1.Ref)
	}
	again, err := b.Failover(v1.Ref, true)
	if err != nil || again.Ref != v2.Ref {
		t.Fatalf("t2: a repeated fail-over made %s (%v), want the same clone %s", again.Ref, err, v2.Ref)
	}
	w.run(10 * time.Second)
	if end := w.resolve(v1.Ref).End(); end.Ref != v2.Ref {
		t.Fatalf("t2: from B the chain ends at %s, want %s", end.Ref, v2.Ref)
	}
	if got, _ := a.Volume(v1.Ref); got.State != chain.Active || !got.Successor.IsZero() {
		t.Fatalf("t2: cut-off A:v1 is %s with successor %q; it cannot know yet", got.State, got.Successor)
	}

	// t3: A returns. Ramen demotes A's last local member, then resyncs the end.
	w.cut[clusterA] = false
	if _, err := a.Demote(v1.Ref); err != nil {
		t.Fatal(err)
	}
	w.run(5 * time.Second) // B announces the successor
	old, _ := a.Volume(v1.Ref)
	if old.Successor != v2.Ref || old.State == chain.Active || old.Tail == "" {
		t.Fatalf("t3: A:v1 %+v, want it fenced, aware of %s, with a tail snapshot", old.Member, v2.Ref)
	}
	if p := pairingOf(t, a, v1.Ref); p.Phase != replication.Paused {
		t.Fatalf("t3: A:v1's pairing is %s; a superseded member never ships again", p.Phase)
	}
	ready := resyncUntilReady(w, b, v2.Ref, clusterA)
	if !ready {
		t.Fatal("t3: resync never became ready")
	}
	p := pairingOf(t, b, v2.Ref)
	if p.Target != clusterA || p.Last.Bytes == 0 {
		t.Fatalf("t3: B:v2 ships to %s, last %+v", p.Target, p.Last)
	}
	w.run(5 * time.Second)
	old, _ = a.Volume(v1.Ref)
	if old.State != chain.Tombstone {
		t.Fatalf("t3: A:v1 is %s after its successor's stream arrived, want Tombstone", old.State)
	}
	home := w.node(clusterA, old.Home)
	if snaps := home.Datasets[old.Dataset()]; !slices.ContainsFunc(snaps, func(s core.SnapshotInfo) bool { return s.Name == old.Tail }) {
		t.Fatalf("t3: the diverged tail %s is gone from %v", old.Tail, snaps)
	}
	if _, err := a.Demote(v1.Ref); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("t3: demoting a reaped member: %v, want ErrNotFound (the CSI layer answers success)", err)
	}

	// t4: a planned relocation back to A loses nothing: A clones B:v2's final snapshot.
	v3 := relocate(w, v2, b, a)
	if v3.Generation != 2 || v3.Predecessor != v2.Ref {
		t.Fatalf("t4: %+v, want generation 2 after %s", v3.Member, v2.Ref)
	}

	// t5: twelve moves in all; the PV's handle still resolves from each site.
	current := v3
	for move := 3; move <= 12; move++ {
		from, to := w.sites[current.Ref.Cluster], a
		if current.Ref.Cluster == clusterA {
			to = b
		}
		current = relocate(w, current, from, to)
	}
	if current.Generation != 12 {
		t.Fatalf("t5: generation %d after twelve moves", current.Generation)
	}
	other := clusterB
	if current.Ref.Cluster == clusterB {
		other = clusterA
	}
	w.cut[other] = true
	r := w.resolve(v1.Ref)
	if r.End().Ref != current.Ref || len(r.Walk) != 13 {
		t.Fatalf("t5: with %s cut off the handle resolves to %s after %d members, want %s after 13",
			other[:8], r.End().Ref, len(r.Walk), current.Ref)
	}
	w.cut[other] = false
	tombstones := 0
	for _, m := range w.resolve(v1.Ref).Walk {
		if m.State == chain.Tombstone {
			tombstones++
		}
	}
	if tombstones < 10 {
		t.Errorf("t5: %d tombstones in a 13-member chain; reaped members stay recorded", tombstones)
	}
}

// relocate runs Ramen's planned relocation of v from one site to the other:
// demote and resync on the old primary until the final sync arrived, then a
// fail-over without force on the new one, then resync from the old primary.
func relocate(w *world, v core.Volume, from, to *core.Site) core.Volume {
	w.t.Helper()
	_, err := from.Demote(v.Ref)
	w.must(err)
	if !resyncUntilReady(w, from, v.Ref, from.Cluster()) {
		w.t.Fatalf("relocate %s: the final sync never arrived", v.Ref)
	}
	next, err := to.Failover(v.Ref, false)
	w.must(err)
	final := pairingOf(w.t, from, v.Ref)
	newest, _ := final.NewestShipped()
	if next.Origin.GUID != newest.GUID {
		w.t.Fatalf("relocate %s: the clone starts from %s, the final snapshot is %s: acknowledged writes lost",
			v.Ref, next.Origin.Snapshot, newest.Name)
	}
	if !resyncUntilReady(w, to, next.Ref, from.Cluster()) {
		w.t.Fatalf("relocate %s: the new primary's resync never became ready", v.Ref)
	}
	w.run(5 * time.Second)
	return next
}

func resyncUntilReady(w *world, s *core.Site, end chain.Ref, source chain.ClusterID) bool {
	w.t.Helper()
	for i := 0; i < 20; i++ {
		ready, err := s.Resync(end, source)
		if err != nil && !errors.Is(err, core.ErrPeerUnreachable) {
			w.t.Fatalf("resync %s: %v", end, err)
		}
		if ready {
			return true
		}
		w.run(5 * time.Second)
	}
	return false
}

func pairingOf(t *testing.T, s *core.Site, ref chain.Ref) core.Pairing {
	t.Helper()
	p, ok, err := s.Pairing(ref)
	if err != nil || !ok {
		t.Fatalf("pairing of %s: found=%v %v", ref, ok, err)
	}
	return p
}
