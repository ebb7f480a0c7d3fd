package sim_test

import (
	"bytes"
	"testing"
	"time"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/sim/drbd"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

func newWorld(t *testing.T, seed uint64) *bedsim.World {
	t.Helper()
	w, err := bedsim.New(bedsim.Options{Seed: seed, Scenario: "test/datapath"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func write(t *testing.T, w *bedsim.World, s *bedsim.Site, ref chain.Ref, offset int64, fill byte) {
	t.Helper()
	d, err := s.Device(ref)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.WriteAt(bytes.Repeat([]byte{fill}, 8192), offset); err != nil {
		t.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// createBlock creates a block volume on s placed on places nodes.
func createBlock(t *testing.T, s *bedsim.Site, name string, sizeBytes uint64, places int) core.Volume {
	t.Helper()
	v, err := s.Control.CreateVolume(core.CreateRequest{Name: name,
		Shape: core.Shape{SizeBytes: sizeBytes, PlaceCount: places, VolumeMode: core.Block}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// placedPair creates a 64 MiB volume on two of s's nodes, lets the world
// place it and returns it as placed, with the node that is not its primary.
func placedPair(t *testing.T, w *bedsim.World, s *bedsim.Site) (core.Volume, string) {
	t.Helper()
	v := createBlock(t, s, "x", 64<<20, 2)
	w.Run(10 * time.Second)
	v, err := s.Control.Volume(v.Ref)
	if err != nil {
		t.Fatal(err)
	}
	secondary := "node-1"
	if v.Primary == secondary {
		secondary = "node-2"
	}
	return v, secondary
}

func read(t *testing.T, s *bedsim.Site, ref chain.Ref, offset int64) byte {
	t.Helper()
	d, err := s.Device(ref)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	buf := make([]byte, 8192)
	if _, err := d.ReadAt(buf, offset); err != nil {
		t.Fatal(err)
	}
	for _, b := range buf[1:] {
		if b != buf[0] {
			t.Fatalf("block at %d is torn", offset)
		}
	}
	return buf[0]
}

// TestDataCrossesSitesAndSurvivesAFailover runs the real agent over simulated
// pools: a volume written on A ships to B; with A cut off, B's clone holds
// what the last shipped snapshot held, and not what A wrote after it.
func TestDataCrossesSitesAndSurvivesAFailover(t *testing.T) {
	w := newWorld(t, 1)
	a, b := w.Site("site-a"), w.Site("site-b")
	v := createBlock(t, a, "pvc-db", 1<<30, 2)
	w.Run(5 * time.Second)
	write(t, w, a, v.Ref, 0, 'a')
	if _, err := a.Control.Enable(v.Ref, b.Cluster); err != nil {
		t.Fatal(err)
	}
	shipped := func() bool {
		st, _ := a.Control.Status(v.Ref)
		return st.Health == core.Healthy
	}
	if !w.RunUntil(shipped, 2*time.Minute) {
		t.Fatalf("nothing shipped in two minutes")
	}
	write(t, w, a, v.Ref, 8192, 'b')
	w.Run(90 * time.Second) // a second snapshot carries 'b'
	w.Net.PartitionBoth("site-a", "site-b")
	write(t, w, a, v.Ref, 16384, 'c') // the diverged tail: never shipped

	clone, err := b.Control.Failover(v.Ref, true)
	if err != nil {
		t.Fatal(err)
	}
	w.Run(10 * time.Second)
	if got := read(t, b, clone.Ref, 0); got != 'a' {
		t.Errorf("block 0 on B's clone = %q, want 'a'", got)
	}
	if got := read(t, b, clone.Ref, 8192); got != 'b' {
		t.Errorf("block 1 on B's clone = %q, want 'b' (shipped before the cut)", got)
	}
	if got := read(t, b, clone.Ref, 16384); got != 0 {
		t.Errorf("block 2 on B's clone = %q, want zeros: A's tail must not reach B", got)
	}
}

func TestTheSameSeedReplaysTheSameRun(t *testing.T) {
	hash := func() string {
		w := newWorld(t, 7)
		a, b := w.Site("site-a"), w.Site("site-b")
		v := createBlock(t, a, "x", 1<<20, 1)
		if _, err := a.Control.Enable(v.Ref, b.Cluster); err != nil {
			t.Fatal(err)
		}
		w.Run(3 * time.Minute)
		return w.Sim.Hash()
	}
	if first, second := hash(), hash(); first != second {
		t.Fatalf("seed 7 gave %s then %s", first, second)
	}
}

// TestDRBDReplicatesInsideASiteAndClonesStartInSync checks the in-site data
// path: a write acknowledged on the primary is on the secondary's pool
// (protocol C), and a fail-over clone made on two nodes from the same received
// snapshot starts UpToDate on both without resyncing a byte.
func TestDRBDReplicatesInsideASiteAndClonesStartInSync(t *testing.T) {
	w := newWorld(t, 3)
	a, b := w.Site("site-a"), w.Site("site-b")
	v := createBlock(t, a, "pvc-db", 256<<20, 2)
	w.Run(10 * time.Second)
	write(t, w, a, v.Ref, 0, 'x')
	v, _ = a.Control.Volume(v.Ref)
	for _, r := range v.Allocation.Replicas {
		d, err := a.Node(r.Node).Pool.Open(v.Dataset())
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1)
		d.ReadAt(buf, 0)
		d.Close()
		if buf[0] != 'x' {
			t.Errorf("%s's pool holds %q at 0, want 'x' once the primary acknowledged it", r.Node, buf[0])
		}
	}
	if _, err := a.Control.Enable(v.Ref, b.Cluster); err != nil {
		t.Fatal(err)
	}
	w.Run(2 * time.Minute)
	resyncedBefore := b.DRBD.(interface{ Stats() drbdStats }).Stats().ResyncedBytes
	clone, err := b.Control.Failover(v.Ref, true)
	if err != nil {
		t.Fatal(err)
	}
	w.Run(10 * time.Second)
	clone, _ = b.Control.Volume(clone.Ref)
	if len(clone.Allocation.Replicas) != 2 {
		t.Fatalf("clone placed on %v, want both nodes that received the snapshot", clone.Allocation.Replicas)
	}
	for _, r := range clone.Allocation.Replicas {
		st, err := b.DRBD.Node(r.Node).Status(clone.Dataset())
		if err != nil || st.Disk != backend.UpToDate {
			t.Errorf("clone on %s: %+v %v, want UpToDate", r.Node, st, err)
		}
	}
	if got := read(t, b, clone.Ref, 0); got != 'x' {
		t.Errorf("clone holds %q, want 'x'", got)
	}
	if resynced := b.DRBD.(interface{ Stats() drbdStats }).Stats().ResyncedBytes - resyncedBefore; resynced != 0 {
		t.Errorf("identical clones resynced %d bytes, want none", resynced)
	}
}

type drbdStats = drbd.Stats
