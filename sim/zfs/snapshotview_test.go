package zfs

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// TestSnapshotViewReadsInPlace: a view reads what the snapshot froze -- not
// the head's later writes, synced or cached -- refuses writes and Syncs,
// changes nothing in the pool, and goes with its snapshot.
func TestSnapshotViewReadsInPlace(t *testing.T) {
	p := New(Options{SizeBytes: 1 << 30, Seed: 1})
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	mustDo(t, write(p, "v", 0, 100)) // 0xab, flushed by Close
	mustDo(t, p.Snapshot("v", "tail"))
	dev, err := p.Open("v")
	mustDo(t, err)
	_, err = dev.WriteAt(bytes.Repeat([]byte{7}, 50), 10)
	mustDo(t, err)
	mustDo(t, dev.Sync())
	before, err := p.Usage()
	mustDo(t, err)
	txg := p.txg

	view, err := p.ReadSnapshot("v", "tail")
	mustDo(t, err)
	got := make([]byte, 150)
	n, err := view.ReadAt(got, 0)
	mustDo(t, err)
	want := append(bytes.Repeat([]byte{0xab}, 100), make([]byte, 50)...)
	if n != len(got) || !bytes.Equal(got, want) {
		t.Fatalf("the view reads %d bytes other than the snapshot froze", n)
	}
	if n, err := view.ReadAt(make([]byte, 10), 1<<20-4); n != 4 || err != io.EOF {
		t.Fatalf("a read across the end: %d, %v", n, err)
	}
	if _, err := view.WriteAt([]byte{1}, 0); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("the view writes: %v", err)
	}
	if err := view.Sync(); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("the view syncs: %v", err)
	}
	after, err := p.Usage()
	mustDo(t, err)
	if after != before || p.txg != txg {
		t.Fatalf("reading the view changed the pool: %+v at txg %d, was %+v at txg %d", after, p.txg, before, txg)
	}
	mustDo(t, view.Close())
	mustDo(t, dev.Close())
	mustDo(t, p.DestroySnapshot("v", "tail"))
	if _, err := view.ReadAt(got, 0); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("a view of a destroyed snapshot reads: %v", err)
	}
	if _, err := p.ReadSnapshot("v", "tail"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("a view of a missing snapshot opens: %v", err)
	}
	mustDo(t, p.Verify())
}
