package pooltest

import (
	"bytes"
	"io"
	"sort"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

var volumeTests = []test{
	{"CreateThinAndThick", testCreateThinAndThick},
	{"CreateRefusals", testCreateRefusals},
	{"WriteAndReadAtOffsets", testWriteAndReadAtOffsets},
	{"WriteAndReadOutOfRange", testWriteAndReadOutOfRange},
	{"ResizeGrowsAndRefusesShrink", testResizeGrowsAndRefusesShrink},
	{"DestroyIsFinalAndRetrySafe", testDestroyIsFinalAndRetrySafe},
	{"DestroyRefusedWhileOpen", testDestroyRefusedWhileOpen},
	{"ReadOnlyFence", testReadOnlyFence},
}

func testCreateThinAndThick(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "thin", volumeBytes, backend.Thin)
	create(t, pool, "thick", volumeBytes, backend.Thick)
	create(t, pool, "a-first", volumeBytes, backend.Thin)
	for _, want := range []backend.VolumeInfo{
		{Name: "thin", SizeBytes: volumeBytes, Provisioning: backend.Thin},
		{Name: "thick", SizeBytes: volumeBytes, Provisioning: backend.Thick},
	} {
		got := volumeInfo(t, pool, want.Name)
		if got.Name != want.Name || got.SizeBytes != want.SizeBytes || got.Provisioning != want.Provisioning ||
			got.Origin != "" || got.ReadOnly {
			t.Fatalf("Volume %s = %+v, want %+v", want.Name, got, want)
		}
		wantContent(t, pool, want.Name, make([]byte, volumeBytes), "a new volume reads as zeros")
	}
	list, err := pool.Volumes()
	must(t, err, "Volumes")
	var names []string
	for _, v := range list {
		names = append(names, v.Name)
	}
	if len(names) != 3 || !sort.StringsAreSorted(names) {
		t.Fatalf("Volumes lists %v, want the three volumes sorted by name", names)
	}
}

func testCreateRefusals(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	Write(t, pool, "v", 0, Pattern(1, chunkBytes))
	// A retried create finds the volume and changes nothing, whatever it asks.
	wantRefusal(t, pool.CreateVolume("v", volumeBytes, backend.Thin), backend.ErrExists, "a repeated create")
	wantRefusal(t, pool.CreateVolume("v", 2*volumeBytes, backend.Thick), backend.ErrExists, "a create over a volume")
	info := volumeInfo(t, pool, "v")
	if info.SizeBytes != volumeBytes || info.Provisioning != backend.Thin {
		t.Fatalf("a refused create changed the volume: %+v", info)
	}
	if got := Read(t, pool, "v", 0, chunkBytes); !bytes.Equal(got, Pattern(1, chunkBytes)) {
		t.Fatal("a refused create changed the volume's data")
	}
	for _, name := range []string{"", "a@b", "a/b"} {
		wantRefusal(t, pool.CreateVolume(name, volumeBytes, backend.Thin), backend.ErrInvalid, "create "+name)
	}
	if list, _ := pool.Volumes(); len(list) != 1 {
		t.Fatalf("refused creates left volumes behind: %v", list)
	}
}

func testWriteAndReadAtOffsets(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	const size = 8 * mib
	create(t, pool, "v", size, backend.Thin)
	model := make([]byte, size)
	dev, err := pool.Open("v")
	must(t, err, "Open")
	// Writes at every alignment: inside a block, across block boundaries of
	// every plausible size, a long run, and the volume's last byte.
	writes := []struct{ offset, length int }{
		{0, 1}, {511, 3}, {4095, 2}, {8191, 8192 + 5}, {16380, 9}, {65535, 70000},
		{mib - 7, 100 << 10}, {3*mib + 12345, 1}, {size - 1, 1}, {size - 4096, 4096}, {100, 50},
	}
	for i, w := range writes {
		data := Pattern(uint64(i+10), w.length)
		n, err := dev.WriteAt(data, int64(w.offset))
		if err != nil || n != w.length {
			t.Fatalf("WriteAt %d, %d bytes: %d, %v", w.offset, w.length, n, err)
		}
		copy(model[w.offset:], data)
		// An unsynced write reads back through the device that wrote it.
		got := make([]byte, w.length+10)
		start := max(0, w.offset-5)
		n, err = dev.ReadAt(got, int64(start))
		end := min(size, start+len(got))
		if (err != nil && err != io.EOF) || n != end-start || !bytes.Equal(got[:n], model[start:end]) {
			t.Fatalf("ReadAt around write %d (offset %d) does not read what was written (%d, %v)", i, w.offset, n, err)
		}
	}
	must(t, dev.Sync(), "Sync")
	must(t, dev.Close(), "Close")
	wantContent(t, pool, "v", model, "after the writes")
	// Unaligned reads of a fresh device.
	for _, r := range []struct{ offset, length int }{{1, 10}, {8190, 8200}, {mib - 100, 200}, {size - 10, 10}} {
		if got := Read(t, pool, "v", int64(r.offset), r.length); !bytes.Equal(got, model[r.offset:r.offset+r.length]) {
			t.Fatalf("ReadAt %d, %d bytes differs from what was written", r.offset, r.length)
		}
	}
}

func testWriteAndReadOutOfRange(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	const size = 4 * mib
	create(t, pool, "v", size, backend.Thin)
	Write(t, pool, "v", size-chunkBytes, Pattern(2, chunkBytes))
	dev, err := pool.Open("v")
	must(t, err, "Open")
	defer func() { must(t, dev.Close(), "Close") }()
	buf := make([]byte, 100)
	n, err := dev.ReadAt(buf, size-50)
	if n != 50 || err != io.EOF || !bytes.Equal(buf[:50], Pattern(2, chunkBytes)[chunkBytes-50:]) {
		t.Fatalf("ReadAt across the end: %d, %v; want the last 50 bytes and io.EOF", n, err)
	}
	if n, err := dev.ReadAt(buf, size); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at the end: %d, %v; want 0, io.EOF", n, err)
	}
	// A block device may write the part before the end (Linux truncates the
	// request), so only the error is pinned, and that the size holds.
	if n, err := dev.WriteAt(Pattern(3, 100), size-50); err == nil || n == 100 {
		t.Fatalf("WriteAt across the end: %d, %v; want an error", n, err)
	}
	if info := volumeInfo(t, pool, "v"); info.SizeBytes != size {
		t.Fatalf("a write past the end changed the size to %d", info.SizeBytes)
	}
}

func testResizeGrowsAndRefusesShrink(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	tail := Pattern(4, chunkBytes)
	Write(t, pool, "v", volumeBytes-chunkBytes, tail)
	must(t, pool.ResizeVolume("v", 2*volumeBytes), "grow")
	must(t, pool.ResizeVolume("v", 2*volumeBytes), "a retried grow to the same size")
	if info := volumeInfo(t, pool, "v"); info.SizeBytes != 2*volumeBytes {
		t.Fatalf("after the grow the size is %d", info.SizeBytes)
	}
	want := make([]byte, 2*volumeBytes)
	copy(want[volumeBytes-chunkBytes:], tail)
	wantContent(t, pool, "v", want, "a grown volume keeps its data and reads zeros beyond")
	Write(t, pool, "v", 2*volumeBytes-chunkBytes, tail)
	copy(want[2*volumeBytes-chunkBytes:], tail)
	wantRefusal(t, pool.ResizeVolume("v", volumeBytes), backend.ErrInvalid, "a shrink")
	if info := volumeInfo(t, pool, "v"); info.SizeBytes != 2*volumeBytes {
		t.Fatalf("a refused shrink changed the size to %d", info.SizeBytes)
	}
	wantContent(t, pool, "v", want, "after a refused shrink")
	wantRefusal(t, pool.ResizeVolume("missing", volumeBytes), backend.ErrNotFound, "resize of a missing volume")
}

func testDestroyIsFinalAndRetrySafe(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	Write(t, pool, "v", 0, Pattern(5, chunkBytes))
	must(t, pool.Snapshot("v", "s"), "Snapshot")
	must(t, pool.DestroyVolume("v"), "DestroyVolume")
	wantRefusal(t, pool.DestroyVolume("v"), backend.ErrNotFound, "a repeated destroy")
	_, err := pool.Volume("v")
	wantRefusal(t, err, backend.ErrNotFound, "Volume of a destroyed volume")
	_, err = pool.Snapshots("v")
	wantRefusal(t, err, backend.ErrNotFound, "Snapshots of a destroyed volume")
	_, err = pool.Open("v")
	wantRefusal(t, err, backend.ErrNotFound, "Open of a destroyed volume")
	wantRefusal(t, pool.Clone("v", "s", "c"), backend.ErrNotFound, "a clone of a destroyed volume's snapshot")
	// A volume created again under the name is new: nothing of the old one
	// comes back.
	create(t, pool, "v", volumeBytes, backend.Thin)
	wantContent(t, pool, "v", make([]byte, volumeBytes), "a re-created volume")
	wantSnapshots(t, pool, "v")
}

func testDestroyRefusedWhileOpen(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	dev, err := pool.Open("v")
	must(t, err, "Open")
	wantRefusal(t, pool.DestroyVolume("v"), backend.ErrBusy, "destroy of an open volume")
	volumeInfo(t, pool, "v")
	must(t, dev.Close(), "Close")
	must(t, pool.DestroyVolume("v"), "destroy once closed")
}

func testReadOnlyFence(t *testing.T, newPool newPoolFunc) {
	pool := newPool(t)
	create(t, pool, "v", volumeBytes, backend.Thin)
	data := Pattern(6, chunkBytes)
	Write(t, pool, "v", 0, data)
	early, err := pool.Open("v")
	must(t, err, "Open before the fence")
	must(t, pool.SetReadOnly("v", true), "SetReadOnly")
	if !volumeInfo(t, pool, "v").ReadOnly {
		t.Fatal("a fenced volume does not report ReadOnly")
	}
	_, err = early.WriteAt(Pattern(7, chunkBytes), 0)
	wantRefusal(t, err, backend.ErrRefused, "a write through a device opened before the fence")
	must(t, early.Close(), "Close")
	late, err := pool.Open("v")
	must(t, err, "Open of a fenced volume")
	_, err = late.WriteAt(Pattern(7, chunkBytes), chunkBytes)
	wantRefusal(t, err, backend.ErrRefused, "a write to a fenced volume")
	must(t, late.Close(), "Close")
	if got := Read(t, pool, "v", 0, 2*chunkBytes); !bytes.Equal(got[:chunkBytes], data) ||
		!bytes.Equal(got[chunkBytes:], make([]byte, chunkBytes)) {
		t.Fatal("refused writes changed a fenced volume")
	}
	must(t, pool.SetReadOnly("v", false), "lifting the fence")
	Write(t, pool, "v", chunkBytes, data)
	if got := Read(t, pool, "v", chunkBytes, chunkBytes); !bytes.Equal(got, data) {
		t.Fatal("a write after the fence was lifted did not land")
	}
	wantRefusal(t, pool.SetReadOnly("missing", true), backend.ErrNotFound, "fencing a missing volume")
}
