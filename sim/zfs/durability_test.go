package zfs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// TestCrashKeepsOnlySyncedWrites: acknowledged (synced) data survives a
// crash, the rest is lost, and devices opened before it are gone.
func TestCrashKeepsOnlySyncedWrites(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	dev, err := p.Open("v")
	mustDo(t, err)
	synced, lost := bytes.Repeat([]byte{1}, 10000), bytes.Repeat([]byte{2}, 5000)
	_, err = dev.WriteAt(synced, 0)
	mustDo(t, err)
	mustDo(t, dev.Sync())
	_, err = dev.WriteAt(lost, 15000) // over a synced block and beyond
	mustDo(t, err)
	before := allocated(t, p)
	p.Crash()
	if got := allocated(t, p); got >= before {
		t.Fatalf("the crash kept the lost writes' space: %d, was %d", got, before)
	}
	if _, err := dev.WriteAt([]byte{9}, 0); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("a device from before the crash writes: %v", err)
	}
	if err := dev.Close(); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("a device from before the crash closes: %v", err)
	}
	want := make([]byte, 20000)
	copy(want, synced)
	if got := pooltest.Read(t, p, "v", 0, len(want)); !bytes.Equal(got, want) {
		t.Fatal("after the crash the volume is not what was synced")
	}
	mustDo(t, p.DestroyVolume("v")) // the crash closed every device
	mustDo(t, p.Verify())
}

// TestSnapshotTakesSyncedContent: a snapshot holds what was synced; cached
// writes stay in the cache and land on the head at the next sync.
func TestSnapshotTakesSyncedContent(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	mustDo(t, write(p, "v", 0, 100)) // Close flushes: in the tree
	dev, err := p.Open("v")
	mustDo(t, err)
	_, err = dev.WriteAt(bytes.Repeat([]byte{7}, 100), 50)
	mustDo(t, err)
	mustDo(t, p.Snapshot("v", "s"))
	mustDo(t, p.Clone("v", "s", "c"))
	want := append(bytes.Repeat([]byte{0xab}, 100), make([]byte, 50)...)
	if got := pooltest.Read(t, p, "c", 0, 150); !bytes.Equal(got, want) {
		t.Fatal("the snapshot holds cached writes")
	}
	mustDo(t, dev.Close())
	copy(want[50:], bytes.Repeat([]byte{7}, 100))
	if got := pooltest.Read(t, p, "v", 0, 150); !bytes.Equal(got, want) {
		t.Fatal("the last close did not flush the cache onto the head")
	}
	// The cached write reached the pool after the snapshot: the volume is
	// modified since, as a replica written by mistake would be.
	if v := p.volumes["v"]; v.modifiedTxg <= v.latest().createTxg {
		t.Fatal("a flush after the snapshot does not count as a modification")
	}
	mustDo(t, p.Verify())
}

// TestRollbackDiscardsCachedWrites: rollback drops the cache with the rest of
// what the volume gained, on a device that stays open.
func TestRollbackDiscardsCachedWrites(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	mustDo(t, p.Snapshot("v", "empty"))
	dev, err := p.Open("v")
	mustDo(t, err)
	_, err = dev.WriteAt([]byte{1, 2, 3}, 0)
	mustDo(t, err)
	mustDo(t, p.Rollback("v", "empty"))
	buf := make([]byte, 3)
	_, err = dev.ReadAt(buf, 0)
	mustDo(t, err)
	if !bytes.Equal(buf, make([]byte, 3)) {
		t.Fatal("a cached write survived the rollback")
	}
	mustDo(t, dev.Close())
	mustDo(t, p.Verify())
}

// A write over a block already in the cache allocates nothing: the device's
// path, which only a refusal prints, is not built for every write.
func TestRewritingACachedBlockAllocatesNothing(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	dev, err := p.Open("v")
	mustDo(t, err)
	data := bytes.Repeat([]byte{7}, 4096)
	_, err = dev.WriteAt(data, 0)
	mustDo(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := dev.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("rewriting a cached block allocates %.1f times, want 0", allocs)
	}
}
