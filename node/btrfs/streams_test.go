package btrfs

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

const (
	chunkBytes    = 64 << 10
	bigVolumeSize = 256 * mib
)

// changeOnePercent writes 1% of a volume in 64 KiB chunks spread over it and
// returns the bytes changed.
func changeOnePercent(t testing.TB, p backend.Pool, volume string, sizeBytes int, seed uint64) int {
	t.Helper()
	chunks := sizeBytes / 100 / chunkBytes
	dev, err := p.Open(volume)
	must(t, err, "Open")
	for i := 0; i < chunks; i++ {
		offset := (i*797 + 13) % (sizeBytes / chunkBytes) * chunkBytes
		if _, err := dev.WriteAt(pooltest.Pattern(seed+uint64(i), chunkBytes), int64(offset)); err != nil {
			t.Fatal(err)
		}
	}
	must(t, dev.Sync(), "Sync")
	must(t, dev.Close(), "Close")
	return chunks * chunkBytes
}

func streamBytes(t testing.TB, p backend.Pool, volume, base, snapshot string, into io.Writer) int64 {
	t.Helper()
	stream, err := p.Send(volume, base, snapshot)
	must(t, err, "Send")
	n, err := io.Copy(into, stream)
	must(t, err, "reading the stream")
	must(t, stream.Close(), "closing the stream")
	return n
}

// TestIncrementalStreamSizeFollowsTheChange ships a 256 MiB volume whole,
// changes 1% of it and ships the delta: the delta carries the changed bytes
// and little more.
func TestIncrementalStreamSizeFollowsTheChange(t *testing.T) {
	a, b := newTestPool(t), newTestPool(t)
	must(t, a.CreateVolume("v", bigVolumeSize, backend.Thin), "CreateVolume")
	pooltest.Write(t, a, "v", 0, pooltest.Pattern(10, bigVolumeSize))
	must(t, a.Snapshot("v", "s1"), "Snapshot s1")
	var full bytes.Buffer
	fullBytes := streamBytes(t, a, "v", "", "s1", &full)
	must(t, b.Receive("r", &full), "Receive the full stream")
	changed := changeOnePercent(t, a, "v", bigVolumeSize, 11)
	must(t, a.Snapshot("v", "s2"), "Snapshot s2")
	var delta bytes.Buffer
	deltaBytes := streamBytes(t, a, "v", "s1", "s2", &delta)
	t.Logf("256 MiB volume: full stream %d bytes (%.4f of the volume); 1%% changed = %d bytes, delta stream %d bytes (%.4f of the change)",
		fullBytes, float64(fullBytes)/bigVolumeSize, changed, deltaBytes, float64(deltaBytes)/float64(changed))
	if fullBytes < bigVolumeSize || fullBytes > bigVolumeSize*101/100 {
		t.Errorf("a full stream of %d written bytes is %d bytes", bigVolumeSize, fullBytes)
	}
	if deltaBytes < int64(changed) || deltaBytes > int64(changed)*102/100+chunkBytes {
		t.Errorf("a delta of %d changed bytes is %d bytes, want within 2%% and 64 KiB of the change", changed, deltaBytes)
	}
	must(t, b.Receive("r", &delta), "Receive the delta")
	if !bytes.Equal(pooltest.Content(t, a, "v"), pooltest.Content(t, b, "r")) {
		t.Fatal("the replica differs from the volume after the delta")
	}
}

// TestSnapshotsBeingSentAreBusy: a snapshot a stream reads cannot be
// destroyed, nor its volume, nor the pool closed, until the stream closes.
func TestSnapshotsBeingSentAreBusy(t *testing.T) {
	p := newTestPool(t)
	must(t, p.CreateVolume("v", 16*mib, backend.Thin), "CreateVolume")
	pooltest.Write(t, p, "v", 0, pooltest.Pattern(12, 8*mib))
	must(t, p.Snapshot("v", "s1"), "Snapshot s1")
	pooltest.Write(t, p, "v", 0, pooltest.Pattern(13, mib))
	must(t, p.Snapshot("v", "s2"), "Snapshot s2")
	stream, err := p.Send("v", "s1", "s2")
	must(t, err, "Send")
	for _, c := range []struct {
		what string
		err  error
	}{
		{"destroy of the snapshot being sent", p.DestroySnapshot("v", "s2")},
		{"destroy of the stream's base", p.DestroySnapshot("v", "s1")},
		{"destroy of the volume", p.DestroyVolume("v")},
		{"close of the pool", p.Close()},
	} {
		what, err := c.what, c.err
		var toolErr *backend.ToolError
		if !errors.Is(err, backend.ErrBusy) || !errors.As(err, &toolErr) {
			t.Errorf("%s while a send runs: %v, want ErrBusy", what, err)
		}
	}
	must(t, stream.Close(), "closing the stream unread")
	must(t, p.DestroySnapshot("v", "s1"), "destroy once the stream closed")
}

// TestCloseRefusesOpenDevices: Close keeps the pool while a device is open,
// and detaches every loop device once none is (newTestPool checks that).
func TestCloseRefusesOpenDevices(t *testing.T) {
	p := newTestPool(t)
	must(t, p.CreateVolume("v", 8*mib, backend.Thin), "CreateVolume")
	dev, err := p.Open("v")
	must(t, err, "Open")
	if err := p.Close(); !errors.Is(err, backend.ErrBusy) {
		t.Fatalf("Close with an open device: %v, want ErrBusy", err)
	}
	if _, err := dev.WriteAt([]byte("still usable"), 0); err != nil {
		t.Fatalf("a refused Close broke the device: %v", err)
	}
	must(t, dev.Close(), "Close the device")
	if err := dev.Close(); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("a second Close of a device: %v, want ErrInvalid", err)
	}
}
