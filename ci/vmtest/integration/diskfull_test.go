package integration

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// A Secondary whose pool fills up: its zvol refuses the replicated writes,
// and DRBD 8.4 (on-io-error at its default) detaches the disk -- the replica
// is Diskless while the Primary writes on, its bitmap collecting what the
// Secondary misses. A detached disk stays detached: no reconnect brings it
// back. Once space is freed, the node agent's next pass (Replicator.Up with
// the same configuration) attaches it again, and DRBD resyncs what it
// missed. sim/drbd's TestAFullPeerDiskIsDetachedUntilUpAttachesIt asserts the
// same sequence on the simulation.
func TestFullPoolDetachesTheSecondaryUntilTheAgentAttachesIt(t *testing.T) {
	g := needGuests(t)
	const name, sizeBytes = "it-diskfull", 64 * mib
	const minor = 2004
	config := upPair(t, g, name, sizeBytes, minor, 7104)
	a, b := g.Nodes[0], g.Nodes[1] // a is Primary; b's pool fills up
	logB := &logMark{t: t, n: b, name: name, minor: minor}
	skipInitialSync(t, g, name)
	if out, err := b.Output("drbdsetup", "show", "--show-defaults", fmt.Sprint(minor)); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "on-io-error") {
				t.Logf("%s runs %s", b.Name, strings.TrimSpace(line))
			}
		}
	}
	must(t, a.DRBD.Primary(name, false), "Primary on %s", a.Name)
	logB.next("set-up")

	// 1. b's pool fills: a thick volume takes all but 4 MiB of it.
	fillPool(t, b, 4*mib)
	data := pooltest.Pattern(21, 32*mib)
	writeDRBD(t, a, name, 8*mib, data)
	await(t, b.Name+"'s disk to go", func() bool {
		s, err := b.DRBD.Status(name)
		return err == nil && s.Disk == backend.Diskless
	})
	lines := logB.next("the full pool")
	st, p := peerOf(t, a, name)
	t.Logf("%s after %s's pool filled: %s %s, peer %s %s, %d bytes out of sync", a.Name, b.Name, st.Role, st.Disk, p.Connection, p.Disk, p.OutOfSyncBytes)
	if st.Disk != backend.UpToDate || p.Connection != backend.Connected || p.Disk != backend.Diskless {
		t.Errorf("%s is %s, its peer %s %s: want UpToDate, peer Connected Diskless", a.Name, st.Disk, p.Connection, p.Disk)
	}
	if !anyContains(lines, "disk( UpToDate -> Failed )") && !anyContains(lines, "-> Failed") {
		t.Errorf("%s's kernel log does not show its disk failing", b.Name)
	}

	// 2. A detached disk stays detached while the link holds.
	more := pooltest.Pattern(22, 4*mib)
	writeDRBD(t, a, name, 48*mib, more)
	if s, err := b.DRBD.Status(name); err != nil || s.Disk != backend.Diskless {
		t.Fatalf("%s with its pool still full: %+v %v, want Diskless", b.Name, s, err)
	}

	// An agent pass while the pool is still full: the attach cannot write
	// the disk's metadata.
	err := b.DRBD.Up(config)
	st, _ = peerOf(t, b, name)
	t.Logf("Up on %s with its pool still full: %v; then %s", b.Name, err, st.Disk)
	logB.next("an attach onto the full pool")
	if err == nil || st.Disk != backend.Diskless {
		t.Errorf("an attach onto the full pool: %v, disk %s; want it refused and the replica Diskless", err, st.Disk)
	}

	// 3. Space comes back; the agent's pass attaches the disk and DRBD
	// resyncs what b missed.
	emptyPool(t, b)
	must(t, b.DRBD.Up(config), "Up on %s with its disk detached (the agent's next pass)", b.Name)
	await(t, "the re-attached replica to resync", func() bool { return upToDatePair(a.DRBD, name) && upToDatePair(b.DRBD, name) })
	logB.next("attached again")
	must(t, a.DRBD.Secondary(name), "Secondary on %s", a.Name)
	must(t, b.DRBD.Primary(name, false), "Primary on %s", b.Name)
	if got := readDevice(t, b, name, 8*mib, len(data)); !bytes.Equal(got, data) {
		t.Fatalf("%s does not hold what %s wrote while its pool was full", b.Name, a.Name)
	}
	if got := readDevice(t, b, name, 48*mib, len(more)); !bytes.Equal(got, more) {
		t.Fatalf("%s does not hold what %s wrote while its disk was detached", b.Name, a.Name)
	}
	must(t, b.DRBD.Secondary(name), "Secondary on %s", b.Name)
}

// fillPool leaves n's pool about free bytes: an empty sparse volume
// reserves the rest (refreservation), as a runaway writer would have taken it.
// The filler goes when the test ends, whether or not emptyPool took it first.
func fillPool(t *testing.T, n *Node, free uint64) {
	t.Helper()
	available := func() uint64 {
		out, err := n.Output("zfs", "get", "-Hp", "-o", "value", "available", poolName)
		must(t, err, "zfs get available on %s", n.Name)
		bytes, err := strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
		must(t, err, "zfs get available on %s printed %q", n.Name, out)
		return bytes
	}
	_, err := n.Output("zfs", "create", "-s", "-V", "16G", poolName+"/filler")
	must(t, err, "creating the filler on %s", n.Name)
	_, err = n.Output("zfs", "set", fmt.Sprintf("refreservation=%d", available()-free), poolName+"/filler")
	must(t, err, "reserving the pool on %s", n.Name)
	t.Logf("%s's pool: %d bytes available", n.Name, available())
	t.Cleanup(func() { _, _ = n.Output("zfs", "destroy", poolName+"/filler") })
}

func emptyPool(t *testing.T, n *Node) {
	t.Helper()
	_, err := n.Output("zfs", "destroy", poolName+"/filler")
	must(t, err, "destroying the filler on %s", n.Name)
}

// The Primary's own pool fills up. What DRBD 8.4 does with the write its
// disk refuses decides what an application sees: sim/drbd models it after
// this story (TestAFullLocalDiskLeavesThePrimaryWritingThroughItsPeer).
func TestFullPoolUnderThePrimary(t *testing.T) {
	g := needGuests(t)
	const name, sizeBytes = "it-diskfull-primary", 64 * mib
	const minor = 2005
	config := upPair(t, g, name, sizeBytes, minor, 7105)
	a, b := g.Nodes[0], g.Nodes[1] // a is Primary, and its pool fills up
	logA := &logMark{t: t, n: a, name: name, minor: minor}
	skipInitialSync(t, g, name)
	must(t, a.DRBD.Primary(name, false), "Primary on %s", a.Name)
	logA.next("set-up")

	fillPool(t, a, 4*mib)
	data := pooltest.Pattern(31, 32*mib)
	dev, err := a.DRBD.Open(name)
	must(t, err, "Open on %s", a.Name)
	n, werr := dev.WriteAt(data, 8*mib)
	serr := dev.Sync()
	must(t, dev.Close(), "Close on %s", a.Name)
	st, p := peerOf(t, a, name)
	t.Logf("the Primary's write into its full pool: wrote %d of %d bytes, %v; sync %v; then %s %s, peer %s %s, %d bytes out of sync",
		n, len(data), werr, serr, st.Role, st.Disk, p.Connection, p.Disk, p.OutOfSyncBytes)
	logA.next("the full pool")
	if werr != nil || serr != nil {
		t.Fatalf("the write failed: DRBD passed the local error on although the peer took the data")
	}
	if st.Disk != backend.Diskless || p.Disk != backend.UpToDate {
		t.Errorf("the Primary is %s, its peer %s: want a Diskless Primary over an UpToDate peer", st.Disk, p.Disk)
	}
	if got := readDevice(t, a, name, 8*mib, len(data)); !bytes.Equal(got, data) {
		t.Fatalf("the Diskless Primary does not read back what it wrote (through its peer)")
	}
	emptyPool(t, a)
	must(t, a.DRBD.Up(config), "Up on %s with its disk detached", a.Name)
	await(t, "the Primary's disk to resync", func() bool { return upToDatePair(a.DRBD, name) && upToDatePair(b.DRBD, name) })
	logA.next("attached again")
	if got := readDevice(t, a, name, 8*mib, len(data)); !bytes.Equal(got, data) {
		t.Fatalf("after the attach the Primary does not read what it wrote")
	}
	must(t, a.DRBD.Secondary(name), "Secondary on %s", a.Name)
}

// The Primary's pool fills while it holds the only UpToDate copy: its peer
// is still the SyncTarget of the initial sync. What DRBD 8.4 makes of the
// write its own disk refuses, and of the I/O after, is what sim/drbd
// models for a Primary left without UpToDate data.
func TestFullPoolUnderThePrimaryWhosePeerIsStillSyncing(t *testing.T) {
	g := needGuests(t)
	const name, sizeBytes = "it-diskfull-syncing", 64 * mib
	const minor = 2006
	config := upPair(t, g, name, sizeBytes, minor, 7106)
	a, b := g.Nodes[0], g.Nodes[1]
	logA := &logMark{t: t, n: a, name: name, minor: minor}
	// A slow initial sync, so that b stays Inconsistent throughout.
	for _, n := range g.Nodes {
		_, err := n.Output("drbdsetup", "disk-options", fmt.Sprint(minor), "--c-plan-ahead=0", "--resync-rate=64k")
		must(t, err, "slowing the resync on %s", n.Name)
	}
	must(t, a.DRBD.Primary(name, true), "Primary --force on %s (the initial sync)", a.Name)
	data := pooltest.Pattern(41, mib)
	writeDRBD(t, a, name, 60*mib, data)
	st, p := peerOf(t, a, name)
	t.Logf("before the fill: %s %s, peer %s %s, %d bytes out of sync", st.Role, st.Disk, p.Connection, p.Disk, p.OutOfSyncBytes)
	logA.next("set-up")

	fillPool(t, a, 4*mib)
	more := pooltest.Pattern(42, 8*mib)
	dev, err := a.DRBD.Open(name)
	must(t, err, "Open on %s", a.Name)
	n, werr := dev.WriteAt(more, 16*mib)
	serr := dev.Sync()
	got := make([]byte, len(data))
	k, rerr := dev.ReadAt(got, 60*mib)
	must(t, dev.Close(), "Close on %s", a.Name)
	st, p = peerOf(t, a, name)
	t.Logf("the write into the full pool: %d of %d bytes, %v; sync %v; a read of older data: %d bytes, %v, intact %t; then %s %s, peer %s %s",
		n, len(more), werr, serr, k, rerr, bytes.Equal(got, data), st.Role, st.Disk, p.Connection, p.Disk)
	logA.next("the full pool")
	// The write may land in the page cache; the flush is where it fails,
	// so it is never acknowledged. Reads fail too: no UpToDate data is
	// reachable (on-no-data-accessible io-error).
	if (werr == nil && serr == nil) || rerr == nil {
		t.Errorf("with its only UpToDate disk detached, the Primary's write and flush (%v, %v) and read (%v): want the write unacknowledged and the read failed", werr, serr, rerr)
	}
	if st.Disk != backend.Diskless || p.Disk != backend.Inconsistent {
		t.Errorf("the Primary is %s, its peer %s: want a Diskless Primary and an Inconsistent peer", st.Disk, p.Disk)
	}

	emptyPool(t, a)
	must(t, a.DRBD.Up(config), "Up on %s once the pool has room", a.Name)
	for _, n := range g.Nodes {
		_, _ = n.Output("drbdsetup", "disk-options", fmt.Sprint(minor), "--c-plan-ahead=20", "--resync-rate=100M")
	}
	await(t, "the sync to resume from the attached disk", func() bool { return upToDatePair(a.DRBD, name) && upToDatePair(b.DRBD, name) })
	logA.next("attached again")
	if got := readDevice(t, a, name, 60*mib, len(data)); !bytes.Equal(got, data) {
		t.Errorf("the data written before the fill is not what %s reads after the attach", a.Name)
	}
	if got := readDevice(t, a, name, 16*mib, len(more)); bytes.Equal(got, more) {
		t.Errorf("%s holds the write whose flush failed", a.Name)
	}
	must(t, a.DRBD.Secondary(name), "Secondary on %s", a.Name)
}
