// Package pooltest is the conformance suite of backend.Pool. Every pool
// implementation (ZFS zvols, btrfs subvolumes with loop devices, the
// simulation) runs it; a behaviour the suite does not pin down is one the
// implementations may disagree on, so the suite pins what the storage core
// relies on and nothing of any one implementation's internals.
//
// The suite needs pools with at least MinFreeBytes free. Its volumes are a
// few tens of MiB, which a loop-backed pool holds. It changes data in
// 64 KiB-aligned chunks, which cover whole blocks for every block size up to
// 64 KiB (zvol volblocksize 8K or 16K, btrfs 4K sectors), so that "bytes
// changed" is exact on every backend. It syncs before every snapshot: a
// snapshot takes what reached the pool, not what sits in a cache.
package pooltest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

const (
	mib = 1 << 20
	// MinFreeBytes is the free space the suite needs in each pool it is given.
	MinFreeBytes = 256 * mib
	// volumeBytes is the size of most of the suite's volumes.
	volumeBytes = 32 * mib
	// chunkBytes is the unit of change: aligned, it covers whole blocks.
	chunkBytes = 64 << 10
	// slackBytes is how far a real pool's free space may drift around an
	// operation that changed nothing (metadata, asynchronous frees).
	slackBytes = 1 * mib
)

// Run runs the suite. newPool returns a fresh, empty pool for one subtest; a
// subtest that ships streams between nodes calls it twice, and the two pools
// must behave as two nodes (their snapshot GUIDs must not collide).
func Run(t *testing.T, newPool func(t *testing.T) backend.Pool) {
	fresh := func(t *testing.T) backend.Pool {
		t.Helper()
		pool := newPool(t)
		usage, err := pool.Usage()
		if err != nil {
			t.Fatalf("Usage of a fresh pool: %v", err)
		}
		if usage.FreeBytes < MinFreeBytes {
			t.Fatalf("pooltest needs %d bytes free in a fresh pool, got %+v", MinFreeBytes, usage)
		}
		if volumes, err := pool.Volumes(); err != nil || len(volumes) != 0 {
			t.Fatalf("a fresh pool lists volumes %v (err %v)", volumes, err)
		}
		return pool
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) { test.run(t, fresh) })
	}
}

type newPoolFunc func(t *testing.T) backend.Pool

type test struct {
	name string
	run  func(t *testing.T, newPool newPoolFunc)
}

// tests lists every subtest, grouped by the file that holds them.
var tests = concat(volumeTests, snapshotTests, streamTests, spaceTests)

func concat(groups ...[]test) []test {
	var all []test
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// wantRefusal checks that err is a refusal of the kind, in the tool's words.
func wantRefusal(t *testing.T, err, kind error, what string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got error %v, want %v", what, err, kind)
	}
	var toolErr *backend.ToolError
	if !errors.As(err, &toolErr) || toolErr.Message == "" || toolErr.Tool == "" {
		t.Fatalf("%s: %v does not carry the tool's own words in a *backend.ToolError", what, err)
	}
}

func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Pattern is deterministic incompressible data: splitmix64 output, so that
// a backend that compresses cannot make a stream look smaller than its data.
// Other tests that write blocks use it too.
func Pattern(seed uint64, n int) []byte {
	out := make([]byte, n)
	state := seed
	for i := 0; i < n; i += 8 {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		for j := 0; j < 8 && i+j < n; j++ {
			out[i+j] = byte(z >> (8 * j))
		}
	}
	return out
}

// Write writes data at an offset through a device and syncs it. The suite
// writes through it, and so do other tests of pools.
func Write(t testing.TB, pool backend.Pool, volume string, offset int64, data []byte) {
	t.Helper()
	dev, err := pool.Open(volume)
	must(t, err, "Open "+volume)
	n, err := dev.WriteAt(data, offset)
	if err != nil || n != len(data) {
		t.Fatalf("WriteAt %s offset %d, %d bytes: wrote %d, %v", volume, offset, len(data), n, err)
	}
	must(t, dev.Sync(), "Sync "+volume)
	must(t, dev.Close(), "Close "+volume)
}

// Read reads n bytes at an offset through a fresh device.
func Read(t testing.TB, pool backend.Pool, volume string, offset int64, n int) []byte {
	t.Helper()
	dev, err := pool.Open(volume)
	must(t, err, "Open "+volume)
	defer func() { must(t, dev.Close(), "Close "+volume) }()
	buf := make([]byte, n)
	got, err := dev.ReadAt(buf, offset)
	if got != n || (err != nil && err != io.EOF) {
		t.Fatalf("ReadAt %s offset %d, %d bytes: read %d, %v", volume, offset, n, got, err)
	}
	return buf
}

// Content reads a whole volume.
func Content(t testing.TB, pool backend.Pool, volume string) []byte {
	t.Helper()
	info, err := pool.Volume(volume)
	must(t, err, "Volume "+volume)
	return Read(t, pool, volume, 0, int(info.SizeBytes))
}

// wantContent compares a volume with the bytes it must hold.
func wantContent(t *testing.T, pool backend.Pool, volume string, want []byte, what string) {
	t.Helper()
	got := Content(t, pool, volume)
	if len(got) != len(want) {
		t.Fatalf("%s: %s holds %d bytes, want %d", what, volume, len(got), len(want))
	}
	if i := firstDifference(got, want); i >= 0 {
		t.Fatalf("%s: %s differs at byte %d: got %#x, want %#x", what, volume, i, got[i], want[i])
	}
}

func firstDifference(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

func create(t *testing.T, pool backend.Pool, volume string, sizeBytes uint64, provisioning backend.Provisioning) {
	t.Helper()
	must(t, pool.CreateVolume(volume, sizeBytes, provisioning), fmt.Sprintf("CreateVolume %s %d %v", volume, sizeBytes, provisioning))
}

// send reads a whole stream into memory, as a transport would carry it.
func send(t *testing.T, pool backend.Pool, volume, base, snapshot string) []byte {
	t.Helper()
	stream, err := pool.Send(volume, base, snapshot)
	must(t, err, fmt.Sprintf("Send %s -i %q @%s", volume, base, snapshot))
	data, err := io.ReadAll(stream)
	must(t, err, "reading the stream")
	must(t, stream.Close(), "closing the stream")
	return data
}

func receive(t *testing.T, pool backend.Pool, volume string, stream []byte) {
	t.Helper()
	must(t, pool.Receive(volume, bytes.NewReader(stream)), "Receive "+volume)
}

// snapshots lists a volume's snapshots.
func snapshots(t *testing.T, pool backend.Pool, volume string) []backend.SnapshotInfo {
	t.Helper()
	list, err := pool.Snapshots(volume)
	must(t, err, "Snapshots "+volume)
	return list
}

func snapshotNames(list []backend.SnapshotInfo) []string {
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.Name
	}
	return names
}

// wantSnapshots checks a volume's snapshots by name, oldest first.
func wantSnapshots(t *testing.T, pool backend.Pool, volume string, want ...string) []backend.SnapshotInfo {
	t.Helper()
	list := snapshots(t, pool, volume)
	if fmt.Sprint(snapshotNames(list)) != fmt.Sprint(want) {
		t.Fatalf("%s has snapshots %v, want %v", volume, snapshotNames(list), want)
	}
	return list
}

func volumeInfo(t *testing.T, pool backend.Pool, volume string) backend.VolumeInfo {
	t.Helper()
	info, err := pool.Volume(volume)
	must(t, err, "Volume "+volume)
	return info
}

func usage(t *testing.T, pool backend.Pool) backend.Usage {
	t.Helper()
	u, err := pool.Usage()
	must(t, err, "Usage")
	if u.FreeBytes+u.AllocatedBytes != u.SizeBytes && !(u.FreeBytes == 0 && u.AllocatedBytes >= u.SizeBytes) {
		t.Fatalf("Usage %+v: free plus allocated is not the size", u)
	}
	return u
}

// wantFreeAbout checks that an operation that changed nothing left the free
// space where it was, within what a real pool drifts.
func wantFreeAbout(t *testing.T, pool backend.Pool, before backend.Usage, what string) {
	t.Helper()
	after := usage(t, pool)
	if after.FreeBytes+slackBytes < before.FreeBytes || after.FreeBytes > before.FreeBytes+slackBytes {
		t.Fatalf("%s: free space moved from %d to %d", what, before.FreeBytes, after.FreeBytes)
	}
}
