package drbd

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// Resync takes bytes / bandwidth of simulated time, in chunk-sized events,
// and the target is Inconsistent until the last chunk.
func TestResyncTakesTime(t *testing.T) {
	site, res := newPrimaryPair(t, func(o *Options) { o.ResyncBytesPerSecond = 1 << 20; o.ResyncChunkBytes = 256 << 10 })
	site.Partition("node-0", "node-1")
	res.write(0, 0, fill(3, 4<<20), true)
	site.Heal("node-0", "node-1")
	healed := site.sched.now
	site.Pass(2 * time.Second)
	if st := res.status(1); st.Disk != backend.Inconsistent {
		t.Errorf("half-way through the resync the target is %s", st.Disk)
	}
	if p := res.peer(0, "node-1"); p.OutOfSyncBytes != 2<<20 {
		t.Errorf("half-way: %d bytes out of sync, want %d", p.OutOfSyncBytes, 2<<20)
	}
	if !site.Await(res.allUpToDate) {
		t.Fatal("no convergence")
	}
	if took := site.sched.now.Sub(healed); took != 4*time.Second {
		t.Errorf("4 MiB at 1 MiB/s took %v", took)
	}
	if moved := site.cluster.Stats().ResyncedBytes; moved != 4<<20 {
		t.Errorf("resync moved %d bytes, want %d", moved, 4<<20)
	}
}

// An interrupted resync resumes where it stopped.
func TestInterruptedResyncResumes(t *testing.T) {
	site, res := newPrimaryPair(t, func(o *Options) { o.ResyncBytesPerSecond = 1 << 20; o.ResyncChunkBytes = 256 << 10 })
	site.Partition("node-0", "node-1")
	res.write(0, 0, fill(3, 2<<20), true)
	site.Heal("node-0", "node-1")
	site.Pass(time.Second)
	site.Partition("node-0", "node-1")
	if st := res.status(1); st.Disk != backend.Inconsistent {
		t.Fatalf("an interrupted SyncTarget is %s", st.Disk)
	}
	wantRefusal(t, res.r[1].Primary("r0", false), backend.ErrRefused, "(-2) Need access to UpToDate data")
	site.Heal("node-0", "node-1")
	if !site.Await(res.allUpToDate) {
		t.Fatal("no convergence")
	}
	if moved := site.cluster.Stats().ResyncedBytes; moved != 2<<20 {
		t.Errorf("an interrupted resync of 2 MiB moved %d bytes in all", moved)
	}
}

// `primary --force` on fresh replicas is the initial full sync.
func TestForcedPrimaryFullSync(t *testing.T) {
	site := newSimSite(t, 2, nil)
	res := newSimResource(t, site, "r0", 2)
	for i := range res.r {
		res.must(res.r[i].CreateMetadata(res.config))
		res.must(res.r[i].Up(res.config))
	}
	res.must(res.r[0].Primary("r0", true))
	if !site.Await(res.allUpToDate) {
		t.Fatalf("no initial sync:%s", dumpLog(site))
	}
	usable := uint64(testVolumeBytes - superblockBytes)
	if moved := site.cluster.Stats().ResyncedBytes; moved != usable {
		t.Errorf("initial sync moved %d bytes, want the whole device (%d)", moved, usable)
	}
}

func TestRefusalWords(t *testing.T) {
	site := newSimSite(t, 2, nil)
	res := newSimResource(t, site, "r0", 2)
	res.start()
	_, err := res.r[1].Open("r0")
	wantRefusal(t, err, backend.ErrRefused, "open /dev/drbd1000: Wrong medium type")
	res.must(res.r[0].Primary("r0", false))
	err = res.r[1].Primary("r0", false)
	if err == nil || err.Error() != "drbdsetup: r0: State change failed: (-1) Multiple primaries not allowed by config" {
		t.Errorf("second primary: %v", err)
	}
	res.must(res.r[1].Down("r0"))
	site.Partition("node-0", "node-1")
	res.must(res.r[1].Up(res.config))
	err = res.r[1].Primary("r0", false)
	if err == nil || err.Error() != "drbdsetup: r0: State change failed: (-2) Need access to UpToDate data" {
		t.Errorf("outdated primary: %v", err)
	}
	err = res.r[1].NewCurrentUUID("r0", true)
	wantRefusal(t, err, backend.ErrRefused, "(151) Need to be StandAlone")
	if _, err := res.r[1].Show("nothing"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Show of an unknown resource: %v", err)
	}
}

// In a triangle where only the far node is cut off from the Primary, the far
// node cannot be promoted through the middle one: DRBD 9's role change is a
// cluster-wide commit.
func TestNoSecondPrimaryAcrossTheMesh(t *testing.T) {
	site := newSimSite(t, 3, func(o *Options) { o.Quorum = true })
	res := newSimResource(t, site, "r0", 3)
	res.start()
	res.must(res.r[0].Primary("r0", false))
	site.Partition("node-0", "node-2")
	if st := res.status(2); st.Disk != backend.Outdated {
		t.Errorf("the weak node is %s, want Outdated", st.Disk)
	}
	wantRefusal(t, res.r[2].Primary("r0", true), backend.ErrRefused, "Multiple primaries not allowed by config")
}

func TestFenceDontCare(t *testing.T) {
	site, res := newPrimaryPair(t, func(o *Options) { o.Fencing = FenceDontCare })
	res.must(res.r[1].Down("r0"))
	res.rejoin(1)
	site.Partition("node-0", "node-1")
	if st := res.status(1); st.Disk != backend.UpToDate {
		t.Errorf("without fencing a cut-off secondary is %s", st.Disk)
	}
	res.must(res.r[1].Primary("r0", false)) // DRBD's default lets it, and split brain follows
}

func TestDisklessPrimary(t *testing.T) {
	site := newSimSite(t, 3, nil)
	res := newSimResource(t, site, "r0", 3, "node-2")
	has, err := res.r[2].HasMetadata(res.config)
	if err != nil || has {
		t.Fatalf("HasMetadata on a diskless node = %t, %v", has, err)
	}
	wantRefusal(t, res.r[2].CreateMetadata(res.config), backend.ErrInvalid, "no disk")
	res.start()
	if st := res.status(2); st.Disk != backend.Diskless {
		t.Fatalf("diskless node is %s", st.Disk)
	}
	res.must(res.r[2].Primary("r0", false))
	res.write(2, 4096, fill(8, 5000), true)
	if got := res.read(2, 4096, 5000); !bytes.Equal(got, fill(8, 5000)) {
		t.Error("diskless primary reads back something else")
	}
	for _, node := range []string{"node-0", "node-1"} {
		if got := res.onVolume(node, 4096, 5000); !bytes.Equal(got, fill(8, 5000)) {
			t.Errorf("%s's volume lacks the diskless primary's write", node)
		}
	}
	wantRefusal(t, res.r[2].NewCurrentUUID("r0", false), backend.ErrInvalid, "Device does not have a disk-config")
}

func TestOptionsAreValidated(t *testing.T) {
	_, err := New(Options{Nodes: []NodeOptions{{Name: "a"}, {Name: "a"}}, Fencing: 9})
	if !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("New with bad options: %v", err)
	}
	for _, want := range []string{"empty Site", "nil Scheduler", "nil Links", "no Open", "twice", "fencing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the options error does not say %q: %v", want, err)
		}
	}
}

func TestDeviceBounds(t *testing.T) {
	_, res := newPrimaryPair(t, nil)
	dev, err := res.r[0].Open("r0")
	res.must(err)
	usable := int64(testVolumeBytes - superblockBytes)
	if _, err := dev.WriteAt(make([]byte, 2), usable-1); err == nil {
		t.Error("a write across the end of the device (into the metadata) succeeded")
	}
	buf := make([]byte, 10)
	if n, err := dev.ReadAt(buf, usable-4); n != 4 || err == nil {
		t.Errorf("a read across the end = %d, %v; want 4 bytes and io.EOF", n, err)
	}
	res.must(dev.Close())
	if err := dev.Close(); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := dev.WriteAt(buf, 0); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("write after Close: %v", err)
	}
}

// DRBD's transfer log: writes the peer acknowledged but has not flushed may
// be lost with the connection, so they count as out of sync even though the
// Primary wrote nothing after the partition.
func TestPartitionMarksUnflushedWrites(t *testing.T) {
	site, res := newPrimaryPair(t, nil)
	res.write(0, 0, fill(1, 4096), true)
	res.write(0, 3*4096, fill(2, 4096), false)
	site.Partition("node-0", "node-1")
	if p := res.peer(0, "node-1"); p.OutOfSyncBytes != 4096 {
		t.Errorf("after a partition the unflushed block is not out of sync: %d bytes", p.OutOfSyncBytes)
	}
}

// A write that covers only part of a block still out of sync on the target
// leaves the block to the resync: the rest of it must still arrive.
func TestPartialWriteDuringResync(t *testing.T) {
	site, res := newPrimaryPair(t, func(o *Options) { o.ResyncBytesPerSecond = 4096; o.ResyncChunkBytes = 4096 })
	site.Partition("node-0", "node-1")
	res.write(0, 0, fill(6, 4*4096), true)
	site.Heal("node-0", "node-1")
	res.write(0, 3*4096+100, fill(7, 50), true) // block 3 is still to come
	res.write(0, 2*4096, fill(8, 4096), true)   // block 2 whole: no longer needs the resync
	if !site.Await(res.allUpToDate) {
		t.Fatal("no convergence")
	}
	want := append(append(fill(6, 2*4096), fill(8, 4096)...), fill(6, 4096)...)
	copy(want[3*4096+100:], fill(7, 50))
	if got := res.onVolume("node-1", 0, 4*4096); !bytes.Equal(got, want) {
		t.Error("the target's blocks differ from the primary's after the resync")
	}
	if moved := site.cluster.Stats().ResyncedBytes; moved != 3*4096 {
		t.Errorf("resync moved %d bytes; the block overwritten whole should not move", moved)
	}
}

// The metadata on the volume is the truth: a volume rolled back to a copy
// from an earlier generation comes up with that generation, not with the
// bitmaps the Cluster remembers for the later one.
func TestRolledBackVolumeBringsItsOwnGeneration(t *testing.T) {
	site := newSimSite(t, 2, nil)
	res := newSimResource(t, site, "r0", 2)
	res.start()
	snapshot := newMemVolume(testVolumeBytes)
	res.must(res.r[0].Primary("r0", false))
	res.write(0, 0, fill(1, 4096), true)
	site.pools["node-0"].volumes["r0"].copyTo(snapshot)
	site.Partition("node-0", "node-1")
	res.write(0, 4096, fill(2, 2*4096), true) // a new generation; node-1 misses 2 blocks
	res.must(res.r[0].Secondary("r0"))
	res.must(res.r[0].Down("r0"))
	rolledBack := newMemVolume(testVolumeBytes)
	snapshot.copyTo(rolledBack)
	site.pools["node-0"].volumes["r0"] = rolledBack
	res.must(res.r[0].Up(res.config))
	if p := res.peer(0, "node-1"); p.OutOfSyncBytes != 0 {
		t.Errorf("the rolled-back replica claims %d bytes out of sync from a generation it no longer holds", p.OutOfSyncBytes)
	}
}
