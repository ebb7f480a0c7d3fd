package workloadtest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

var _ backend.Device = (*Device)(nil)

func TestReadsWhatWasWrittenAtAnyOffset(t *testing.T) {
	d := NewDevice(3 * BlockSizeBytes)
	data := bytes.Repeat([]byte("abcdefg"), 1000) // 7000 bytes across a block boundary
	if _, err := d.WriteAt(data, 100); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data)+200)
	if _, err := d.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[100:100+len(data)], data) || !bytes.Equal(got[:100], make([]byte, 100)) {
		t.Fatal("read back differs from what was written")
	}
	n, err := d.ReadAt(make([]byte, 10), 3*BlockSizeBytes-4)
	if n != 4 || !errors.Is(err, io.EOF) {
		t.Fatalf("read across the end: %d, %v; want 4, EOF", n, err)
	}
}

func TestCrashKeepsOnlySyncedWrites(t *testing.T) {
	d := NewDevice(2 * BlockSizeBytes)
	mustWrite(t, d, []byte("synced"), 0)
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, d, []byte("lost!!"), 0)
	mustWrite(t, d, []byte("lost"), BlockSizeBytes)
	d.Crash()
	if _, err := d.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrCrashed) {
		t.Fatalf("read of a crashed device: %v", err)
	}
	d.Restart()
	if got := d.Block(0)[:6]; string(got) != "synced" {
		t.Fatalf("block 0 after the crash: %q", got)
	}
	if got := d.Block(1); !bytes.Equal(got, make([]byte, BlockSizeBytes)) {
		t.Fatal("an unsynced write to a fresh block survived the crash")
	}
}

func TestFencedRefusesWritesAndSyncs(t *testing.T) {
	d := NewDevice(BlockSizeBytes)
	d.SetFenced(true)
	if _, err := d.WriteAt([]byte("x"), 0); !errors.Is(err, ErrFenced) {
		t.Fatalf("write: %v", err)
	}
	if err := d.Sync(); !errors.Is(err, ErrFenced) {
		t.Fatalf("sync: %v", err)
	}
	d.SetFenced(false)
	mustWrite(t, d, []byte("x"), 0)
}

func TestSyncFailsLeavesWritesVolatile(t *testing.T) {
	d := NewDevice(BlockSizeBytes)
	d.SetSyncFails(true)
	mustWrite(t, d, []byte("x"), 0)
	if err := d.Sync(); !errors.Is(err, ErrQuorumLost) {
		t.Fatalf("sync: %v", err)
	}
	if d.Block(0)[0] != 'x' {
		t.Fatal("the write is not readable before the crash")
	}
	if d.CopySynced().Block(0)[0] != 0 {
		t.Fatal("a write whose Sync failed is durable")
	}
}

func TestCopyIsASnapshotIndependentOfTheOriginal(t *testing.T) {
	d := NewDevice(BlockSizeBytes)
	mustWrite(t, d, []byte("before"), 0) // not synced: a snapshot still holds it
	c := d.Copy()
	mustWrite(t, d, []byte("after!"), 0)
	if got := string(c.Block(0)[:6]); got != "before" {
		t.Fatalf("snapshot holds %q", got)
	}
	c.Crash()
	c.Restart()
	if got := string(c.Block(0)[:6]); got != "before" {
		t.Fatal("a snapshot's content is not durable")
	}
}

func TestRecordLogsEveryLandedWrite(t *testing.T) {
	d := NewDevice(BlockSizeBytes)
	d.Record(true)
	mustWrite(t, d, []byte("a"), 1)
	d.SetFenced(true)
	_, _ = d.WriteAt([]byte("b"), 2)
	if log := d.Log(); len(log) != 1 || log[0].Offset != 1 || string(log[0].Data) != "a" {
		t.Fatalf("log: %+v", log)
	}
}

func mustWrite(t *testing.T, d *Device, p []byte, off int64) {
	t.Helper()
	if _, err := d.WriteAt(p, off); err != nil {
		t.Fatal(err)
	}
}
