package site_test

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// TestTheCoreRunsOnCRDsAsInMemory runs a volume's life on two sites whose
// cores keep their records in twin stores: every read of the CRD store is
// compared with the core's MemoryStore after the same writes. The records are
// the core's own (nanosecond times, tails, re-aimed pairings, tombstones), so
// this is the round trip of every record the core writes in that life.
func TestTheCoreRunsOnCRDsAsInMemory(t *testing.T) {
	t.Run("fake", func(t *testing.T) {
		c := fakeClient(t)
		w := newWorld(t, c, map[chain.ClusterID]string{clusterA: "site-a", clusterB: "site-b"})
		life(w, true)
	})
	t.Run("apiserver", func(t *testing.T) {
		c := apiServer(t)
		w := newWorld(t, c, map[chain.ClusterID]string{clusterA: newNamespace(t, c), clusterB: newNamespace(t, c)})
		life(w, false)
	})
}

// life: create and protect on A; an unplanned fail-over to B while A is cut
// off; A returns, is demoted, resynced and reaped; a drill on A; then (long)
// a planned relocation back to A. The short life (a real API server costs
// about half a second of wall time per simulated second) protects the volume
// for one snapshot only.
func life(w *world, long bool) {
	a, b := w.sites[clusterA], w.sites[clusterB]
	v1, err := a.CreateVolume(core.CreateRequest{Name: "pvc-db", Shape: core.Shape{SizeBytes: 1 << 30, PlaceCount: 2,
		VolumeMode: core.Block, FsType: "xfs"}})
	w.must(err)
	_, err = a.Enable(v1.Ref, clusterB)
	w.must(err)
	if long {
		w.run(150 * time.Second)
	} else {
		w.run(5 * time.Second)
	}

	w.cut[clusterA] = true
	v2, err := b.Failover(v1.Ref, true)
	w.must(err)
	w.run(2 * time.Second)
	w.cut[clusterA] = false
	_, err = a.Demote(v1.Ref)
	w.must(err)
	w.run(2 * time.Second)
	w.resyncUntilReady(b, v2.Ref, clusterA)
	w.run(3 * time.Second)
	if old, _ := a.Volume(v1.Ref); old.State != chain.Tombstone || old.Tail == "" {
		w.t.Fatalf("A:v1 is %s with tail %q, want a tombstone with its tail", old.State, old.Tail)
	}

	bubble, err := a.Drill(core.DrillRequest{Name: "drill", Root: v1.Ref})
	w.must(err)
	w.run(3 * time.Second)
	w.must(a.DeleteVolume(bubble.Ref))
	w.run(3 * time.Second)
	if !long {
		return
	}
	_, err = b.Demote(v2.Ref)
	w.must(err)
	w.resyncUntilReady(b, v2.Ref, clusterB)
	v3, err := a.Failover(v2.Ref, false)
	w.must(err)
	w.resyncUntilReady(a, v3.Ref, clusterB)
	w.run(30 * time.Second)
	if v3.Generation != 2 {
		w.t.Fatalf("the relocation made generation %d", v3.Generation)
	}
}
