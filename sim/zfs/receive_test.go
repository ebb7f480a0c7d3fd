package zfs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

func snapshotNamesOf(p *Pool, volume string) []string {
	var names []string
	for _, s := range p.volumes[volume].snapshots {
		names = append(names, s.name)
	}
	return names
}

func sameContent(t *testing.T, p *Pool, volume string, q *Pool, other string) {
	t.Helper()
	size := int(p.volumes[volume].sizeBytes)
	if q.volumes[other].sizeBytes != uint64(size) {
		t.Fatalf("%s is %d bytes, %s %d", volume, size, other, q.volumes[other].sizeBytes)
	}
	if !bytes.Equal(pooltest.Read(t, p, volume, 0, size), pooltest.Read(t, q, other, 0, size)) {
		t.Fatalf("%s and %s differ", volume, other)
	}
}

// TestRepeatedDeltaIsRefused: `zfs recv` of a snapshot the volume already
// holds, even the same one (same GUID), is refused and changes nothing, as
// zfs 2.1.11 does in `make vmtest` ("cannot restore to tank/r@s2:
// destination already exists").
func TestRepeatedDeltaIsRefused(t *testing.T) {
	a, b := replicatedPair(t)
	mustDo(t, write(a, "v", 8192, 10))
	mustDo(t, a.Snapshot("v", "s2"))
	mustDo(t, b.Receive("r", sendOf(t, a, "v", "s1", "s2")))
	before := allocated(t, b)
	err := b.Receive("r", sendOf(t, a, "v", "s1", "s2"))
	if !errors.Is(err, backend.ErrExists) {
		t.Fatalf("a repeated delta: %v, want ErrExists", err)
	}
	if allocated(t, b) != before || len(b.volumes["r"].snapshots) != 2 {
		t.Fatal("a repeated delta changed the replica")
	}
	sameContent(t, a, "v", b, "r")
}

// TestDeltaOverEmptyLaterSnapshot follows the DMU: the base need not be the
// latest snapshot when nothing was written since it; a later snapshot with
// writes before it is a divergence.
func TestDeltaOverEmptyLaterSnapshot(t *testing.T) {
	a, b := replicatedPair(t)
	mustDo(t, write(a, "v", 8192, 10))
	mustDo(t, a.Snapshot("v", "s2"))
	mustDo(t, b.Snapshot("r", "local"))
	mustDo(t, b.Receive("r", sendOf(t, a, "v", "s1", "s2")))
	if got := snapshotNamesOf(b, "r"); len(got) != 3 || got[1] != "local" || got[2] != "s2" {
		t.Fatalf("snapshots after the delta: %v", got)
	}
	sameContent(t, a, "v", b, "r")

	a2, b2 := replicatedPair(t)
	mustDo(t, write(a2, "v", 8192, 10))
	mustDo(t, a2.Snapshot("v", "s2"))
	mustDo(t, write(b2, "r", 0, 1))
	mustDo(t, b2.Snapshot("r", "local"))
	if err := b2.Receive("r", sendOf(t, a2, "v", "s1", "s2")); !errors.Is(err, backend.ErrDiverged) {
		t.Fatalf("a delta over a written and snapshotted replica: %v", err)
	}
}

// TestCloneStreamFromEarlierOriginSnapshot sends a clone from a snapshot of
// its origin's lineage older than the origin: the stream carries the origin's
// later changes too, and lands as a clone of the older snapshot.
func TestCloneStreamFromEarlierOriginSnapshot(t *testing.T) {
	a, b := replicatedPair(t)
	mustDo(t, write(a, "v", 3*8192, 8192))
	mustDo(t, a.Snapshot("v", "s2"))
	mustDo(t, a.Clone("v", "s2", "c"))
	mustDo(t, write(a, "c", 5*8192, 100))
	mustDo(t, a.Snapshot("c", "T1"))
	stream := sendOf(t, a, "c", "v@s1", "T1")
	if !stream.header.clone || stream.BlockCount() != 2 {
		t.Fatalf("stream %+v with %d blocks, want a clone stream of 2 blocks", stream.header, stream.BlockCount())
	}
	mustDo(t, b.Receive("c", stream))
	if info, _ := b.Volume("c"); info.Origin != "r@s1" {
		t.Fatalf("the received clone is %+v", info)
	}
	sameContent(t, a, "c", b, "c")
	mustDo(t, b.Verify())
}

// TestDeltaCarriesGrowth: a grown volume's delta grows the replica.
func TestDeltaCarriesGrowth(t *testing.T) {
	a, b := replicatedPair(t)
	mustDo(t, a.ResizeVolume("v", 2<<20))
	mustDo(t, write(a, "v", 2<<20-100, 100))
	mustDo(t, a.Snapshot("v", "s2"))
	mustDo(t, b.Receive("r", sendOf(t, a, "v", "s1", "s2")))
	sameContent(t, a, "v", b, "r")
	// Resizing is a modification, as zfs dirties the dataset.
	mustDo(t, b.ResizeVolume("r", 4<<20))
	mustDo(t, a.Snapshot("v", "s3"))
	if err := b.Receive("r", sendOf(t, a, "v", "s2", "s3")); !errors.Is(err, backend.ErrDiverged) {
		t.Fatalf("a delta onto a resized replica: %v", err)
	}
}

// TestReceiveLeavesTheCacheAlone: a receive into a volume with an open
// device lands under its unsynced writes, which a later sync puts on top.
func TestReceiveLeavesTheCacheAlone(t *testing.T) {
	a, b := replicatedPair(t)
	dev, err := b.Open("r")
	mustDo(t, err)
	_, err = dev.WriteAt([]byte{9}, 0)
	mustDo(t, err)
	mustDo(t, write(a, "v", 0, 50))
	mustDo(t, a.Snapshot("v", "s2"))
	mustDo(t, b.Receive("r", sendOf(t, a, "v", "s1", "s2")))
	buf := make([]byte, 2)
	_, err = dev.ReadAt(buf, 0)
	mustDo(t, err)
	if buf[0] != 9 || buf[1] != 0xab {
		t.Fatalf("read %v: want the cached byte over the received block", buf)
	}
	mustDo(t, dev.Close())
	mustDo(t, write(a, "v", 0, 60))
	mustDo(t, a.Snapshot("v", "s3"))
	if err := b.Receive("r", sendOf(t, a, "v", "s2", "s3")); !errors.Is(err, backend.ErrDiverged) {
		t.Fatalf("a delta after the cache reached the replica: %v", err)
	}
	mustDo(t, b.Verify())
}
