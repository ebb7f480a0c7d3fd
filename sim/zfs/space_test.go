package zfs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

func allocated(t *testing.T, p *Pool) uint64 {
	t.Helper()
	u, err := p.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.FreeBytes+u.AllocatedBytes != u.SizeBytes && u.FreeBytes != 0 {
		t.Fatalf("usage %+v does not add up", u)
	}
	return u.AllocatedBytes
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestThinAccountingCountsSharedBlocksOnce walks a thin volume through
// writes, a snapshot, overwrites and a clone, with the exact allocation after
// each step.
func TestThinAccountingCountsSharedBlocksOnce(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	bs := uint64(DefaultBlockSizeBytes)
	steps := []struct {
		what       string
		do         func() error
		allocated  uint64
		usedByHead uint64
	}{
		{"create", func() error { return p.CreateVolume("v", 1<<20, backend.Thin) }, 0, 0},
		{"write 3 blocks", func() error { return write(p, "v", 0, 3*bs) }, 3 * bs, 3 * bs},
		{"overwrite an unshared block in place", func() error { return write(p, "v", 0, 10) }, 3 * bs, 3 * bs},
		{"snapshot", func() error { return p.Snapshot("v", "s") }, 3 * bs, 0},
		{"overwrite 2 shared blocks", func() error { return write(p, "v", bs, 2*bs) }, 5 * bs, 2 * bs},
		{"overwrite them again", func() error { return write(p, "v", bs, 2*bs) }, 5 * bs, 2 * bs},
		{"clone the snapshot", func() error { return p.Clone("v", "s", "c") }, 5 * bs, 2 * bs},
		{"write the clone", func() error { return write(p, "c", 0, 1) }, 6 * bs, 2 * bs},
		{"destroy the clone", func() error { return p.DestroyVolume("c") }, 5 * bs, 2 * bs},
		{"destroy the snapshot", func() error { return p.DestroySnapshot("v", "s") }, 3 * bs, 3 * bs},
	}
	for _, step := range steps {
		mustDo(t, step.do())
		if got := allocated(t, p); got != step.allocated {
			t.Fatalf("%s: allocated %d, want %d", step.what, got, step.allocated)
		}
		if got := p.info(p.volumes["v"]).UsedBytes; got != step.usedByHead {
			t.Fatalf("%s: the head uses %d, want %d", step.what, got, step.usedByHead)
		}
		mustDo(t, p.Verify())
	}
}

// write writes n bytes of 0xab at an offset and syncs.
func write(p *Pool, volume string, offset, n uint64) error {
	dev, err := p.Open(volume)
	if err != nil {
		return err
	}
	if _, err := dev.WriteAt(bytes.Repeat([]byte{0xab}, int(n)), int64(offset)); err != nil {
		dev.Close()
		return err
	}
	return dev.Close()
}

// TestThickReservation follows ZFS's refreservation: the volume reserves its
// size, writes come out of the reservation, and a snapshot must find room for
// the bytes it takes out of it (dsl_dataset_snapshot_reserve_space).
func TestThickReservation(t *testing.T) {
	bs := uint64(DefaultBlockSizeBytes)
	p := New(Options{SizeBytes: 40 * bs, Seed: 1})
	mustDo(t, p.CreateVolume("thick", 16*bs, backend.Thick))
	if got := allocated(t, p); got != 16*bs {
		t.Fatalf("a thick volume of 16 blocks allocates %d", got)
	}
	mustDo(t, write(p, "thick", 0, 10*bs))
	if got := allocated(t, p); got != 16*bs {
		t.Fatalf("writes inside the reservation moved the allocation to %d", got)
	}
	mustDo(t, p.CreateVolume("thin", 1<<30, backend.Thin))
	mustDo(t, write(p, "thin", 0, 16*bs)) // 32 of 40 blocks allocated
	err := p.Snapshot("thick", "s")
	if !errors.Is(err, backend.ErrPoolFull) || err.Error() != "zfs: cannot create snapshot 'tank/thick@s': out of space" {
		t.Fatalf("a snapshot that needs 10 blocks with 8 free: %v", err)
	}
	mustDo(t, p.DestroyVolume("thin")) // 16 of 40
	mustDo(t, p.Snapshot("thick", "s"))
	if got := allocated(t, p); got != 26*bs {
		t.Fatalf("after the snapshot: %d, want the reservation plus the 10 blocks the snapshot holds", got)
	}
	mustDo(t, write(p, "thick", 0, 16*bs))
	if got := allocated(t, p); got != 26*bs {
		t.Fatalf("overwriting the whole thick volume after its snapshot: %d, want %d", got, 26*bs)
	}
	err = p.ResizeVolume("thick", 32*bs)
	if !errors.Is(err, backend.ErrPoolFull) || err.Error() != "zfs: cannot set property for 'tank/thick': out of space" {
		t.Fatalf("growing the reservation past the pool: %v", err)
	}
	mustDo(t, p.ResizeVolume("thick", 30*bs))
	if got := allocated(t, p); got != 40*bs {
		t.Fatalf("after the grow: %d", got)
	}
	mustDo(t, p.Verify())
}

// TestWritesBeyondTheFreeSpace fills a thin pool: the write that does not fit
// is refused whole and changes nothing, cached or synced.
func TestWritesBeyondTheFreeSpace(t *testing.T) {
	bs := uint64(DefaultBlockSizeBytes)
	p := New(Options{SizeBytes: 8 * bs, Seed: 1})
	mustDo(t, p.CreateVolume("v", 1<<30, backend.Thin))
	dev, err := p.Open("v")
	mustDo(t, err)
	if _, err := dev.WriteAt(bytes.Repeat([]byte{1}, int(6*bs)), 0); err != nil {
		t.Fatal(err)
	}
	// Blocks 5 to 8: block 5 is cached already, the other three need 3 of 2 free.
	_, err = dev.WriteAt(bytes.Repeat([]byte{2}, int(4*bs)), int64(5*bs))
	if !errors.Is(err, backend.ErrPoolFull) || err.Error() != "zfs: cannot write '/dev/zvol/tank/v': No space left on device" {
		t.Fatalf("a write a block past the free space: %v", err)
	}
	buf := make([]byte, bs)
	if _, err := dev.ReadAt(buf, int64(5*bs)); err != nil || !bytes.Equal(buf, bytes.Repeat([]byte{1}, int(bs))) {
		t.Fatal("a refused write changed a block it covered")
	}
	// Overwriting what the volume holds alone takes no space, even full.
	if _, err := dev.WriteAt(bytes.Repeat([]byte{3}, int(2*bs)), int64(6*bs)); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.WriteAt(bytes.Repeat([]byte{4}, int(8*bs)), 0); err != nil {
		t.Fatalf("overwriting cached blocks of a full pool: %v", err)
	}
	mustDo(t, dev.Sync())
	if _, err := dev.WriteAt([]byte{5}, 0); err != nil {
		t.Fatalf("overwriting a synced unshared block of a full pool: %v", err)
	}
	mustDo(t, dev.Close())
	if got := allocated(t, p); got != 8*bs {
		t.Fatalf("allocated %d, want the whole pool", got)
	}
	// A shrunken disk refuses growth and frees nothing.
	p.SetSizeBytes(4 * bs)
	if u, _ := p.Usage(); u.FreeBytes != 0 || u.AllocatedBytes != 8*bs {
		t.Fatalf("usage of a pool past its capacity: %+v", u)
	}
	if err := write(p, "v", 9*bs, 1); !errors.Is(err, backend.ErrPoolFull) {
		t.Fatalf("a write to a pool past its capacity: %v", err)
	}
	mustDo(t, p.Snapshot("v", "s")) // a thin snapshot takes nothing
	mustDo(t, p.Verify())
}

// twoSnapshotSource is a pool whose thin volume "v" holds snapshot s1 after
// first bytes written at offset 0 and s2 after second bytes written over them.
func twoSnapshotSource(t *testing.T, first, second uint64) *Pool {
	t.Helper()
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	mustDo(t, write(p, "v", 0, first))
	mustDo(t, p.Snapshot("v", "s1"))
	mustDo(t, write(p, "v", 0, second))
	mustDo(t, p.Snapshot("v", "s2"))
	return p
}

// TestReceiveNeedsTheSpace refuses a stream the pool cannot hold, whole.
func TestReceiveNeedsTheSpace(t *testing.T) {
	bs := uint64(DefaultBlockSizeBytes)
	a := twoSnapshotSource(t, 6*bs, 4*bs)
	b := New(Options{SizeBytes: 8 * bs, Seed: 2})
	mustDo(t, b.Receive("r", sendOf(t, a, "v", "", "s1")))
	err := b.Receive("r", sendOf(t, a, "v", "s1", "s2"))
	if !errors.Is(err, backend.ErrPoolFull) || err.Error() != "zfs: cannot receive incremental stream: out of space" {
		t.Fatalf("a delta of 4 blocks into 2 free: %v", err)
	}
	if len(b.volumes["r"].snapshots) != 1 || allocated(t, b) != 6*bs {
		t.Fatal("a refused receive changed the replica")
	}
	b.SetSizeBytes(10 * bs)
	mustDo(t, b.Receive("r", sendOf(t, a, "v", "s1", "s2")))
	mustDo(t, b.Verify())
}

// TestSnapshotUsedIsWhatOnlyItHolds: a snapshot's UsedBytes are the blocks
// born since its predecessor that its successor (or the head) replaced.
func TestSnapshotUsedIsWhatOnlyItHolds(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	bs := uint64(DefaultBlockSizeBytes)
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	mustDo(t, write(p, "v", 0, 3*bs))
	mustDo(t, p.Snapshot("v", "a"))
	mustDo(t, write(p, "v", bs, 1)) // replaces block 1
	mustDo(t, p.Snapshot("v", "b"))
	mustDo(t, write(p, "v", bs, 1)) // replaces block 1 again
	mustDo(t, write(p, "v", 5*bs, 1))
	list, err := p.Snapshots("v")
	mustDo(t, err)
	if list[0].UsedBytes != bs || list[1].UsedBytes != bs {
		t.Fatalf("snapshots use %d and %d bytes, want one block each", list[0].UsedBytes, list[1].UsedBytes)
	}
	if got := p.info(p.volumes["v"]).UsedBytes; got != 2*bs {
		t.Fatalf("the head uses %d, want its two own blocks", got)
	}
	mustDo(t, p.DestroySnapshot("v", "a"))
	if got := allocated(t, p); got != 5*bs {
		t.Fatalf("after destroying a: %d, want 5 blocks", got)
	}
	mustDo(t, p.Verify())
}
