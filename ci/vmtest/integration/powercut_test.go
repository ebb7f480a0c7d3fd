package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// kernelLog is what DRBD logged about one resource on a node: the lines of
// the kernel log that name the resource ("drbd <name>: ...") or its device
// ("block drbd<minor>: ..."), which no other test uses.
func kernelLog(t *testing.T, n *Node, name string, minor uint32) []string {
	t.Helper()
	out, err := n.Output("dmesg")
	must(t, err, "dmesg on %s", n.Name)
	var lines []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "drbd "+name+": ") || strings.Contains(line, fmt.Sprintf("drbd%d: ", minor)) {
			lines = append(lines, line)
		}
	}
	return lines
}

// logMark follows a node's kernel log for a resource, phase by phase.
type logMark struct {
	t     *testing.T
	n     *Node
	name  string
	minor uint32
	seen  int
}

// next returns the lines logged since the last call, and logs them under the
// phase's name: DRBD's own account of each step stays in the test's output.
func (m *logMark) next(phase string) []string {
	m.t.Helper()
	lines := kernelLog(m.t, m.n, m.name, m.minor)
	if len(lines) < m.seen {
		m.seen = 0 // the ring buffer wrapped: everything is new
	}
	fresh := lines[m.seen:]
	m.seen = len(lines)
	m.t.Logf("%s kernel log, %s:\n\t%s", m.n.Name, phase, strings.Join(fresh, "\n\t"))
	return fresh
}

func anyContains(lines []string, words string) bool {
	for _, line := range lines {
		if strings.Contains(line, words) {
			return true
		}
	}
	return false
}

// currentAndBitmap are the first two of `drbdsetup get-gi`'s UUIDs, without
// their lowest bit: DRBD sets it in the current UUID of a Primary, and it
// names no generation.
func currentAndBitmap(t *testing.T, gi string) (current, bitmap uint64) {
	t.Helper()
	fields := strings.Split(gi, ":")
	if len(fields) < 2 {
		t.Fatalf("get-gi printed %q", gi)
	}
	var uuids [2]uint64
	for i := range uuids {
		u, err := strconv.ParseUint(fields[i], 16, 64)
		if err != nil {
			t.Fatalf("get-gi printed %q: %v", gi, err)
		}
		uuids[i] = u &^ 1
	}
	return uuids[0], uuids[1]
}

// uuidsOf are the four UUIDs of `drbdsetup get-gi`, without the flags that
// follow them.
func uuidsOf(gi string) string {
	fields := strings.SplitN(gi, ":", 5)
	return strings.Join(fields[:min(4, len(fields))], ":")
}

// logNumber finds the first line that matches re and returns its first group
// as a number; -1 when no line matches.
func logNumber(t *testing.T, lines []string, re *regexp.Regexp) int {
	t.Helper()
	for _, line := range lines {
		if m := re.FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[1])
			must(t, err, "%q", line)
			return n
		}
	}
	return -1
}

// What DRBD 8.4 logs of a handshake's bitmaps and of a resync it begins.
var (
	handshakeSelfBits = regexp.MustCompile(`self [0-9A-F:]+ bits:(\d+)`)
	handshakePeerBits = regexp.MustCompile(`peer [0-9A-F:]+ bits:(\d+)`)
	// The peer's UUID flags; 2 is UUID_FLAG_CRASHED_PRIMARY.
	handshakePeerFlags = regexp.MustCompile(`peer [0-9A-F:]+ bits:\d+ flags:(\d+)`)
	syncTargetKiB      = regexp.MustCompile(`Began resync as SyncTarget \(will sync (\d+) KB`)
)

func peerOf(t *testing.T, n *Node, name string) (backend.ResourceStatus, backend.PeerStatus) {
	t.Helper()
	s, err := n.DRBD.Status(name)
	must(t, err, "Status on %s", n.Name)
	if len(s.Peers) != 1 {
		t.Fatalf("%s reports %d peers: %+v", n.Name, len(s.Peers), s)
	}
	return s, s.Peers[0]
}

// writeDRBD writes data at offset through n's DRBD device of the volume
// name and syncs it; readDevice reads it back.
func writeDRBD(t *testing.T, n *Node, name string, offset int64, data []byte) {
	t.Helper()
	dev, err := n.DRBD.Open(name)
	must(t, err, "Open on %s", n.Name)
	writeDevice(t, dev, offset, data)
	must(t, dev.Close(), "Close on %s", n.Name)
}

func readDevice(t *testing.T, n *Node, name string, offset int64, size int) []byte {
	t.Helper()
	dev, err := n.DRBD.Open(name)
	must(t, err, "Open on %s", n.Name)
	defer dev.Close()
	got := make([]byte, size)
	if k, err := dev.ReadAt(got, offset); k != size || err != nil {
		t.Fatalf("ReadAt %d bytes at %d on %s: %d, %v", size, offset, n.Name, k, err)
	}
	return got
}

// The Primary loses power behind a partition, and its Secondary is promoted
// in its place: what the node agent does once the site fences the dead node
// (node/agent: Primary(res, true) only when every missing peer is fenced).
// On DRBD 8.4 with `fencing resource-only` and no fence-peer handler:
// promotion without force is refused, with force it succeeds on a new
// generation; the old Primary, brought up again as Secondary, syncs from the
// new one as SyncTarget -- no split brain -- and ends holding its writes.
// sim/drbd's TestForcedPromotionAfterPrimaryPowerCut asserts the same
// sequence on the simulation.
//
// The power cut: nodeb is cut off the data network and, in the same shell
// command, its disk is force-detached (`drbdsetup detach --force`). From then
// on nothing nodeb's kernel does reaches nodea (the cut) or nodeb's disk (no
// disk): its metadata stays as DRBD last wrote it while Primary -- the
// primary indicator set and the activity log hot, as a power cut leaves them
// (nodea's handshake sees nodeb as a crashed Primary) -- and nodeb cannot start
// a new generation when it notices the lost peer, which a live Primary would
// (and which would make its return a split brain). Then the Replicator's
// Down clears the kernel's remains. A real power cut would also lose what the
// disk had not flushed; the pattern here is synced before the cut, so there
// is nothing to lose. A reboot of the guest would be closer still, but nodeb
// serves the other tests of the run.
func TestForcedPromotionAfterPrimaryPowerCut(t *testing.T) {
	g := needGuests(t)
	const name, sizeBytes = "it-powercut", 64 * mib
	const minor = 2002
	config := upPair(t, g, name, sizeBytes, minor, 7102)
	a, b := g.Nodes[0], g.Nodes[1] // a survives; b is the Primary that loses power
	site := NewSite(t, g)
	logA := &logMark{t: t, n: a, name: name, minor: minor}
	logB := &logMark{t: t, n: b, name: name, minor: minor}
	skipInitialSync(t, g, name)

	// 1. nodeb Primary writes a pattern, synced on both (protocol C).
	must(t, b.DRBD.Primary(name, false), "Primary on %s", b.Name)
	first := pooltest.Pattern(11, 16*mib)
	writeDRBD(t, b, name, 4*mib, first)
	for _, n := range g.Nodes {
		if !upToDatePair(n.DRBD, name) {
			s, _ := n.DRBD.Status(name)
			t.Fatalf("after the writes %s reports %+v, want both UpToDate with nothing out of sync", n.Name, s)
		}
	}
	genBefore, genB := generation(t, a, minor), generation(t, b, minor)
	oldCurrent, _ := currentAndBitmap(t, genBefore)
	if current, _ := currentAndBitmap(t, genB); current != oldCurrent {
		t.Fatalf("before the cut the generations differ: %s has %s, %s has %s", a.Name, genBefore, b.Name, genB)
	}
	logA.next("set-up")
	logB.next("set-up")

	// 2. nodeb loses power: cut off, its disk gone in the same instant.
	site.cutThen(b.Name, a.Name, "drbdsetup", "detach", fmt.Sprint(minor), "--force")
	site.cut(a.Name, b.Name)
	await(t, nodeLosesPeer(a.Name), func() bool {
		_, p := peerOf(t, a, name)
		return p.Connection != backend.Connected
	})
	await(t, nodeLosesPeer(b.Name), func() bool {
		_, p := peerOf(t, b, name)
		return p.Connection != backend.Connected
	})
	must(t, b.DRBD.Down(name), "Down on %s", b.Name)
	if lines := logB.next("the power cut"); anyContains(lines, "new current UUID") {
		t.Fatalf("%s started a new generation around its power cut: a live Primary's reaction, not a dead one's", b.Name)
	}
	st, p := peerOf(t, a, name)
	t.Logf("%s after the power cut: %s %s, peer %s %s", a.Name, st.Role, st.Disk, p.Connection, p.Disk)
	if st.Role != backend.Secondary || st.Disk != backend.UpToDate || p.Connection != backend.Connecting {
		t.Errorf("%s after the power cut is %s %s, its peer %s: want Secondary UpToDate, peer Connecting", a.Name, st.Role, st.Disk, p.Connection)
	}
	if gen := generation(t, a, minor); uuidsOf(gen) != uuidsOf(genBefore) {
		t.Errorf("losing the Primary moved %s's generation from %s to %s", a.Name, genBefore, gen)
	}
	logA.next("losing the Primary")

	// 3. nodea: promotion without force is refused, with force it succeeds.
	err := a.DRBD.Primary(name, false)
	t.Logf("Primary(%s, false) on %s: %v", name, a.Name, err)
	if !errors.Is(err, backend.ErrRefused) || !strings.Contains(err.Error(), "(-7) Refusing to be Primary while peer is not outdated") {
		t.Fatalf("Primary without force on %s: %v, want ErrRefused saying (-7) Refusing to be Primary while peer is not outdated", a.Name, err)
	}
	logA.next("Primary without force")
	must(t, a.DRBD.Primary(name, true), "Primary --force on %s", a.Name)
	if lines := logA.next("Primary with force"); !anyContains(lines, "Forced into split brain situation!") {
		t.Errorf("%s's kernel log does not say it was forced into split brain", a.Name)
	}
	genForced := generation(t, a, minor)
	current, bitmap := currentAndBitmap(t, genForced)
	t.Logf("%s's generation: %s before, %s after the forced promotion", a.Name, genBefore, genForced)
	if current == oldCurrent || bitmap != oldCurrent {
		t.Errorf("the forced promotion left current %X, bitmap %X (current was %X): want a new current UUID and the old one as bitmap UUID",
			current, bitmap, oldCurrent)
	}
	st, p = peerOf(t, a, name)
	t.Logf("%s after the forced promotion: %s %s, peer %s %s", a.Name, st.Role, st.Disk, p.Connection, p.Disk)
	if st.Role != backend.Primary || p.Connection != backend.Connecting || p.Disk != backend.Outdated {
		t.Errorf("%s after the forced promotion is %s, its peer %s %s: want Primary, peer Connecting Outdated", a.Name, st.Role, p.Connection, p.Disk)
	}
	if got := readDevice(t, a, name, 4*mib, len(first)); !bytes.Equal(got, first) {
		t.Fatalf("%s does not read what %s wrote before its power cut", a.Name, b.Name)
	}
	second := pooltest.Pattern(12, 4*mib)
	writeDRBD(t, a, name, 8*mib, second)
	if _, p = peerOf(t, a, name); p.OutOfSyncBytes != uint64(len(second)) {
		t.Errorf("%s has %d bytes out of sync toward its lost peer, want the %d it wrote", a.Name, p.OutOfSyncBytes, len(second))
	}

	// 4. Power back: nodeb up as Secondary with the same configuration; it
	// resyncs from nodea as SyncTarget.
	// A snapshot of nodeb's zvol before its return: the bytes it alone holds
	// afterwards are the blocks the resync rewrote.
	must(t, b.Pool.Snapshot(name, "before-return"), "Snapshot on %s", b.Name)
	t.Cleanup(func() { _ = b.Pool.DestroySnapshot(name, "before-return") })
	site.Heal(a.Name, b.Name)
	must(t, b.DRBD.Up(config), "Up on %s after its power cut", b.Name)
	await(t, "the old Primary to resync", func() bool { return upToDatePair(a.DRBD, name) && upToDatePair(b.DRBD, name) })
	linesA, linesB := logA.next("the old Primary's return"), logB.next("the return after the power cut")
	// The bitmaps the two sides bring: nodea's, the blocks it wrote since the
	// forced promotion; nodeb's, its activity log's extents -- the 16 MiB it
	// wrote (four 4 MiB extents), flushed before the cut but marked all the
	// same, as after any unclean end of a Primary.
	wantA, wantB := len(second)/4096, len(first)/4096
	if self, peer := logNumber(t, linesA, handshakeSelfBits), logNumber(t, linesA, handshakePeerBits); self != wantA || peer != wantB {
		t.Errorf("%s's handshake: its bitmap %d bits, %s's %d; want %d and %d", a.Name, self, b.Name, peer, wantA, wantB)
	}
	if flags := logNumber(t, linesA, handshakePeerFlags); flags&2 == 0 {
		t.Errorf("%s's handshake does not see %s as a crashed Primary (flags %d): the power cut left other metadata than a real one", a.Name, b.Name, flags)
	}
	if kib := logNumber(t, linesB, syncTargetKiB); kib != len(first)/1024 {
		t.Errorf("%s's resync as SyncTarget covers %d KiB, want %d (found -1: no resync as SyncTarget)", b.Name, kib, len(first)/1024)
	}
	for _, lines := range [][]string{linesA, linesB} {
		for _, refusal := range []string{"Split-Brain", "-> StandAlone", "Unrelated data"} {
			if anyContains(lines, refusal) {
				t.Errorf("the return logged %q", refusal)
			}
		}
	}
	// csums-alg: the resync compared the 16 MiB its bitmaps marked and
	// rewrote only the 4 MiB that differ, so nodeb's zvol changed by 4 MiB
	// -- what its next incremental snapshot would carry to the other site.
	// ZFS settles a snapshot's space accounting when the transaction group
	// syncs; until then its used bytes lag the writes.
	must(t, b.Cmder.Command(context.Background(), "zpool", "sync", poolName).Run(), "zpool sync on %s", b.Name)
	snaps, err := b.Pool.Snapshots(name)
	must(t, err, "Snapshots on %s", b.Name)
	for _, s := range snaps {
		if s.Name != "before-return" {
			continue
		}
		t.Logf("the resync rewrote %d bytes of %s's zvol (the bitmaps marked %d)", s.UsedBytes, b.Name, len(first))
		if s.UsedBytes < uint64(len(second)) || s.UsedBytes > uint64(len(second))+mib {
			t.Errorf("the resync rewrote %d bytes of %s's zvol, want the %d that differ: csums-alg should skip the blocks it already held",
				s.UsedBytes, b.Name, len(second))
		}
	}
	ga, gb := generation(t, a, minor), generation(t, b, minor)
	t.Logf("after the resync: %s on %s, %s on %s", ga, a.Name, gb, b.Name)
	ca, _ := currentAndBitmap(t, ga)
	cb, _ := currentAndBitmap(t, gb)
	if ca != current || cb != current {
		t.Errorf("after the resync the current UUIDs are %X on %s and %X on %s: want both the forced promotion's %X", ca, a.Name, cb, b.Name, current)
	}
	st, _ = peerOf(t, b, name)
	if st.Role != backend.Secondary {
		t.Errorf("%s came back %s", b.Name, st.Role)
	}
	must(t, a.DRBD.Secondary(name), "Secondary on %s", a.Name)
	must(t, b.DRBD.Primary(name, false), "Primary on %s after the resync", b.Name)
	want := append([]byte(nil), first...)
	copy(want[4*mib:], second)
	if got := readDevice(t, b, name, 4*mib, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("%s does not hold what %s wrote while it was down", b.Name, a.Name)
	}
}

func nodeLosesPeer(node string) string { return node + " to see its peer not Connected" }

// A Primary that is cut off but alive is no dead node: DRBD 8.4 starts a new
// generation on it the moment it loses its peer, with or without writes. If
// its Secondary is force-promoted meanwhile (a fence that was wrong), the two
// generations split from the same parent, and when the link comes back --
// even after the old Primary was demoted -- DRBD finds a split brain and
// leaves both sides StandAlone: nothing is resynced, nothing is lost, and a
// human decides whose data is discarded.
func TestLivePrimaryReplacedByForceIsASplitBrain(t *testing.T) {
	g := needGuests(t)
	const name, sizeBytes = "it-livefence", 64 * mib
	const minor = 2003
	upPair(t, g, name, sizeBytes, minor, 7103)
	a, b := g.Nodes[0], g.Nodes[1] // b is the Primary that is cut off, not dead
	site := NewSite(t, g)
	logA := &logMark{t: t, n: a, name: name, minor: minor}
	logB := &logMark{t: t, n: b, name: name, minor: minor}
	skipInitialSync(t, g, name)
	must(t, b.DRBD.Primary(name, false), "Primary on %s", b.Name)
	writeDRBD(t, b, name, 0, pooltest.Pattern(21, 4*mib))
	parent, _ := currentAndBitmap(t, generation(t, b, minor))
	logA.next("set-up")
	logB.next("set-up")

	site.Partition(a.Name, b.Name)
	for _, n := range g.Nodes {
		await(t, nodeLosesPeer(n.Name), func() bool {
			_, p := peerOf(t, n, name)
			return p.Connection != backend.Connected
		})
	}
	current, bitmap := currentAndBitmap(t, generation(t, b, minor))
	t.Logf("%s, Primary, cut off without writing: current %X, bitmap %X (parent %X)", b.Name, current, bitmap, parent)
	logB.next("the cut")
	if current == parent || bitmap != parent {
		t.Errorf("the cut-off Primary kept generation %X (bitmap %X): want a new one over %X at once", current, bitmap, parent)
	}
	must(t, a.DRBD.Primary(name, true), "Primary --force on %s", a.Name)
	logA.next("the cut and the forced promotion")
	must(t, b.DRBD.Secondary(name), "Secondary on %s", b.Name)

	site.Heal(a.Name, b.Name)
	for _, n := range g.Nodes {
		await(t, n.Name+" to give up on its peer", func() bool {
			_, p := peerOf(t, n, name)
			return p.Connection == backend.StandAlone
		})
	}
	linesA, linesB := logA.next("the link back"), logB.next("the link back")
	for _, lines := range [][]string{linesA, linesB} {
		if !anyContains(lines, "Split-Brain detected but unresolved, dropping connection!") {
			t.Errorf("no split brain logged")
		}
	}
}
