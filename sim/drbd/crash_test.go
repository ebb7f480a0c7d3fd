package drbd

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// A crashed Secondary keeps its metadata: after restart it is adopted (no
// create-md) and gets exactly what it missed.
func TestCrashKeepsMetadata(t *testing.T) {
	site, res := newPrimaryPair(t, nil)
	res.write(0, 0, fill(1, 3*4096), true)

	site.crash("node-1")
	if _, err := res.r[1].Status("r0"); !errors.Is(err, ErrNodeDown) {
		t.Fatalf("Status on a crashed node: %v", err)
	}
	res.write(0, 4096, fill(2, 4096), true)
	if p := res.peer(0, "node-1"); p.Connection != backend.Connecting || p.OutOfSyncBytes != 4096 {
		t.Fatalf("primary sees the crashed peer %s with %d bytes out of sync", p.Connection, p.OutOfSyncBytes)
	}

	site.cluster.Restart("node-1")
	has, err := res.r[1].HasMetadata(res.config)
	if err != nil || !has {
		t.Fatalf("HasMetadata after restart = %t, %v", has, err)
	}
	wantRefusal(t, res.r[1].CreateMetadata(res.config), backend.ErrRefused, "already in place")
	resyncedBefore := site.cluster.Stats().ResyncedBytes
	res.rejoin(1)
	if moved := site.cluster.Stats().ResyncedBytes - resyncedBefore; moved != 4096 {
		t.Errorf("resync moved %d bytes, want the one block written meanwhile", moved)
	}
	want := append(append(fill(1, 4096), fill(2, 4096)...), fill(1, 4096)...)
	if got := res.onVolume("node-1", 0, 3*4096); !bytes.Equal(got, want) {
		t.Error("restarted secondary does not hold the primary's data")
	}
}

// A Secondary that crashes loses writes it acknowledged but had not flushed;
// the Primary's transfer log marks them, so resync brings them back.
func TestCrashedSecondaryGetsUnflushedWritesBack(t *testing.T) {
	site, res := newPrimaryPair(t, nil)
	res.write(0, 8192, fill(7, 4096), false)
	site.crash("node-1")
	if got := res.onVolume("node-1", 8192, 4096); bytes.Equal(got, fill(7, 4096)) {
		t.Fatal("the test double kept an unsynced write through a crash")
	}
	site.cluster.Restart("node-1")
	res.rejoin(1)
	if got := res.onVolume("node-1", 8192, 4096); !bytes.Equal(got, fill(7, 4096)) {
		t.Error("the unflushed write is lost on the restarted secondary")
	}
}

// A Primary that crashes loses unflushed local writes that its peer has; on
// restart its activity log marks them and the peer gives them back.
func TestCrashedPrimaryGetsLostBlocksBack(t *testing.T) {
	site, res := newPrimaryPair(t, nil)
	dev, err := res.r[0].Open("r0")
	res.must(err)
	if _, err := dev.WriteAt(fill(9, 4096), 12288); err != nil {
		t.Fatal(err)
	}
	site.crash("node-0")
	if _, err := dev.WriteAt(fill(9, 1), 0); !errors.Is(err, ErrNodeDown) {
		t.Errorf("write on a crashed node's device: %v", err)
	}
	site.cluster.Restart("node-0")
	res.rejoin(0)
	if got := res.onVolume("node-0", 12288, 4096); !bytes.Equal(got, fill(9, 4096)) {
		t.Error("the crashed primary did not get its lost block back from the peer")
	}
	if st := res.status(0); st.Role != backend.Secondary {
		t.Errorf("a restarted node comes up %s", st.Role)
	}
}

// A SyncTarget that crashes mid-resync loses the resynced blocks it had not
// flushed; its activity log marks them again, so the data ends whole.
func TestCrashedSyncTargetRedoesUnflushedResync(t *testing.T) {
	site, res := newPrimaryPair(t, func(o *Options) { o.ResyncBytesPerSecond = 1 << 20; o.ResyncChunkBytes = 64 << 10 })
	site.Partition("node-0", "node-1")
	res.write(0, 0, fill(4, 1<<20), true)
	site.Heal("node-0", "node-1")
	site.Pass(500 * time.Millisecond)
	site.crash("node-1")
	site.cluster.Restart("node-1")
	res.rejoin(1)
	if got := res.onVolume("node-1", 0, 1<<20); !bytes.Equal(got, fill(4, 1<<20)) {
		t.Error("the crashed SyncTarget claims to be in sync but lost resynced blocks")
	}
}

// A Secondary that leaves gracefully flushed first: coming back costs no
// resync when the Primary wrote nothing meanwhile.
func TestGracefulLeaveResyncsNothing(t *testing.T) {
	site, res := newPrimaryPair(t, nil)
	res.write(0, 0, fill(1, 3*4096), false)
	res.must(res.r[1].Down("r0"))
	res.rejoin(1)
	if moved := site.cluster.Stats().ResyncedBytes; moved != 0 {
		t.Errorf("a graceful leave cost a resync of %d bytes", moved)
	}
}
