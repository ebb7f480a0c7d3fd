package btrfs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// TestReverseDeltaThatClonesFromItsBase ships a volume to a replica, writes
// the replica the way a relocation's new primary does, and ships the change
// back onto the snapshot the original took itself. The change shares an
// extent with the base at another offset, so btrfs send emits a clone from
// the base, naming it by the replica's received UUID: the original's own
// UUID. btrfs-progs before 6.10.1 looks a clone's source up by received UUID
// only (btrfs-progs issue #606) and refused exactly this stream on the real
// bed: "ERROR: clone: did not find source subvol".
func TestReverseDeltaThatClonesFromItsBase(t *testing.T) {
	a, b := replicated(t)

	cloneWithin(t, b.layout.data("v"), 0, 8*mib, 1*mib)
	pooltest.Write(t, b, "v", 12*mib, pooltest.Pattern(41, 64<<10))
	must(t, b.Snapshot("v", "s2"), "Snapshot s2 of the replica")
	shipBack(t, b, a, "v", "s1", "s2")
	snaps, err := a.Snapshots("v")
	must(t, err, "Snapshots")
	if len(snaps) != 2 || snaps[1].Name != "s2" {
		t.Fatalf("the original holds %v, want s1 and s2", snaps)
	}
	left, err := os.ReadDir(a.layout.staging())
	must(t, err, "reading the staging directory")
	if len(left) != 0 {
		t.Fatalf("the receive left %d entries in staging", len(left))
	}
}

// TestCloneStreamBackThatClonesFromItsOrigin is the same stream for a
// fail-over clone: the replica's clone of s1 ships back, as a clone stream
// whose base is the original's own s1.
func TestCloneStreamBackThatClonesFromItsOrigin(t *testing.T) {
	a, b := replicated(t)

	must(t, b.Clone("v", "s1", "c"), "Clone the replica's s1")
	cloneWithin(t, b.layout.data("c"), 2*mib, 10*mib, 1*mib)
	must(t, b.Snapshot("c", "t1"), "Snapshot t1 of the clone")
	shipBack(t, b, a, "c", "v@s1", "t1")
}

// replicated returns a pool holding volume v with its snapshot s1, and a
// pool that received v@s1 from it.
func replicated(t testing.TB) (original, replica *Pool) {
	t.Helper()
	a, b := newTestPool(t), newTestPool(t)
	const size = 16 * mib
	must(t, a.CreateVolume("v", size, backend.Thin), "CreateVolume")
	pooltest.Write(t, a, "v", 0, pooltest.Pattern(40, size))
	must(t, a.Snapshot("v", "s1"), "Snapshot s1")
	var full bytes.Buffer
	streamBytes(t, a, "v", "", "s1", &full)
	must(t, b.Receive("v", &full), "Receive the full stream")
	return a, b
}

// shipBack sends volume@snapshot from the replica, incremental from base,
// checks that the stream clones from its base, and receives it into the
// original, which must then hold what the replica holds.
func shipBack(t testing.TB, replica, original *Pool, volume, base, snapshot string) {
	t.Helper()
	var stream bytes.Buffer
	streamBytes(t, replica, volume, base, snapshot, &stream)
	if !clonesFromBase(t, stream.Bytes()) {
		t.Fatalf("the stream of %s@%s clones nothing from %s: the test no longer sends the stream it is about", volume, snapshot, base)
	}
	must(t, original.Receive(volume, &stream), "Receive the stream back onto the original's own snapshot")
	if !bytes.Equal(pooltest.Content(t, original, volume), pooltest.Content(t, replica, volume)) {
		t.Fatalf("the original's %s differs from the replica's after the stream back", volume)
	}
}

// clonesFromBase reports whether a stream of Send has a clone command whose
// source is the stream's base.
func clonesFromBase(t testing.TB, stream []byte) bool {
	t.Helper()
	h, err := readStreamHeader(bufio.NewReader(bytes.NewReader(stream)))
	must(t, err, "reading the stream's header")
	const cmdClone = 16 // BTRFS_SEND_C_CLONE
	commands := stream[envelopeBytes+sendHeaderBytes:]
	for len(commands) >= commandHeader {
		length := int(binary.LittleEndian.Uint32(commands))
		kind := binary.LittleEndian.Uint16(commands[4:])
		if len(commands) < commandHeader+length {
			t.Fatalf("a command of %d bytes overruns the stream", length)
		}
		attrs, err := parseAttributes(commands[commandHeader : commandHeader+length])
		must(t, err, "parsing a command")
		if kind == cmdClone && formatUUID(attrs[attrCloneUUID]) == h.baseUUID {
			return true
		}
		commands = commands[commandHeader+length:]
	}
	return false
}

// cloneWithin makes length bytes of the file at to share the extents at from
// (FICLONERANGE), as a reflink copy does.
func cloneWithin(t testing.TB, path string, from, to, length int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err, "opening the volume's data")
	defer f.Close()
	err = unix.IoctlFileCloneRange(int(f.Fd()), &unix.FileCloneRange{
		Src_fd: int64(f.Fd()), Src_offset: uint64(from), Src_length: uint64(length), Dest_offset: uint64(to)})
	must(t, err, "FICLONERANGE")
}
