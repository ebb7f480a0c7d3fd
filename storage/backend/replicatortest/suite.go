package replicatortest

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// Run runs the conformance suite. newSite builds (or resets) a site of at
// least the given number of nodes for one test, or skips the test when it
// cannot (DRBD 8.4 replicates between two nodes only); each test brings up a
// resource and volumes named after itself and downs the resource at cleanup.
func Run(t *testing.T, newSite func(t *testing.T, nodes int) Site) {
	tests := []struct {
		name string
		run  func(t *testing.T, newSite func(t *testing.T, nodes int) Site)
	}{
		{"FreshReplicasSkipTheInitialSync/2", func(t *testing.T, s func(*testing.T, int) Site) { testFreshSkip(t, s, 2) }},
		{"FreshReplicasSkipTheInitialSync/3", func(t *testing.T, s func(*testing.T, int) Site) { testFreshSkip(t, s, 3) }},
		{"PrimaryWritesReachThePeer", testWritesReachPeer},
		{"SecondPrimaryIsRefused", testSecondPrimary},
		{"DemoteWithOpenDeviceIsBusy", testDemoteOpen},
		{"MetadataIsAdoptedNotRecreated", testAdoption},
		{"UpTwiceIsIdempotent", testUpTwice},
		{"UpWithChangedPortOrMinorIsRefused", testChangedConfig},
		{"PartitionResyncsOnlyChangedBlocks/2", func(t *testing.T, s func(*testing.T, int) Site) { testPartition(t, s, 2) }},
		{"PartitionResyncsOnlyChangedBlocks/3", func(t *testing.T, s func(*testing.T, int) Site) { testPartition(t, s, 3) }},
		{"OutdatedSecondaryNeedsForce", testOutdatedNeedsForce},
		{"DisconnectedSecondaryNeedsForce", testDisconnectedNeedsForce},
		{"SplitBrainIsReportedNotResolved", testSplitBrain},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newSite) })
	}
}

// Fresh replicas of identical (zeroed) volumes start UpToDate on every node
// without an initial sync: baton's path for new volumes and received clones.
func testFreshSkip(t *testing.T, newSite func(*testing.T, int) Site, n int) {
	f := newFixture(t, newSite, n)
	for i := range f.nodes {
		has, err := f.r[i].HasMetadata(f.config)
		f.must(err, "HasMetadata on %s", f.nodes[i])
		if has {
			t.Fatalf("HasMetadata on a fresh volume of %s = true", f.nodes[i])
		}
		f.must(f.r[i].CreateMetadata(f.config), "CreateMetadata on %s", f.nodes[i])
		has, err = f.r[i].HasMetadata(f.config)
		f.must(err, "HasMetadata on %s", f.nodes[i])
		if !has {
			t.Fatalf("HasMetadata after CreateMetadata on %s = false", f.nodes[i])
		}
		f.must(f.r[i].Up(f.config), "Up on %s", f.nodes[i])
	}
	f.await("all connected", f.allConnected)
	for i := range f.nodes {
		if s := f.status(i); s.Disk != backend.Inconsistent || s.Role != backend.Secondary {
			t.Errorf("fresh replica on %s is %s %s, want Secondary Inconsistent", f.nodes[i], s.Role, s.Disk)
		}
	}
	expectRefusal(t, f.r[1].Primary(f.config.Name, false), backend.ErrRefused, "Need access to UpToDate data",
		"promoting a fresh Inconsistent replica")
	f.must(f.r[0].NewCurrentUUID(f.config.Name, true), "NewCurrentUUID(clear-bitmap)")
	if s := f.status(0); s.Disk != backend.UpToDate {
		t.Errorf("after new-current-uuid --clear-bitmap %s is %s, want UpToDate at once", f.nodes[0], s.Disk)
	}
	for j := 1; j < n; j++ {
		if p := f.peer(0, j); p.OutOfSyncBytes != 0 {
			t.Errorf("after clear-bitmap %s has %d bytes out of sync with %s, want 0", f.nodes[0], p.OutOfSyncBytes, p.Node)
		}
	}
	f.await("all UpToDate", f.allUpToDate)
	f.must(f.r[n-1].Primary(f.config.Name, false), "promoting %s without force", f.nodes[n-1])
}

// Protocol C: what the Primary wrote is on the peer when roles swap.
func testWritesReachPeer(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	first, second := pattern(0xa1, 3*4096), pattern(0x5c, 777)
	f.must(f.r[0].Primary(f.config.Name, false), "Primary on %s", f.nodes[0])
	f.write(0, 0, first)
	f.write(0, 1<<20+512, second) // unaligned: a block DRBD must carry whole
	f.expectRead(0, 0, first, "local read")
	f.must(f.r[0].Secondary(f.config.Name), "Secondary on %s", f.nodes[0])
	f.must(f.r[1].Primary(f.config.Name, false), "Primary on %s", f.nodes[1])
	f.expectRead(1, 0, first, "after the swap")
	f.expectRead(1, 1<<20+512, second, "after the swap")
	back := pattern(0x33, 4096)
	f.write(1, 8192, back)
	f.must(f.r[1].Secondary(f.config.Name), "Secondary on %s", f.nodes[1])
	f.must(f.r[0].Primary(f.config.Name, false), "Primary on %s", f.nodes[0])
	f.expectRead(0, 8192, back, "after swapping back")
	f.expectRead(0, 0, first[:8192], "after swapping back")
}

func testSecondPrimary(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	f.must(f.r[0].Primary(f.config.Name, false), "Primary on %s", f.nodes[0])
	f.must(f.r[0].Primary(f.config.Name, false), "Primary again on %s (idempotent)", f.nodes[0])
	expectRefusal(t, f.r[1].Primary(f.config.Name, false), backend.ErrRefused,
		"Multiple primaries not allowed by config", "a second primary")
	expectRefusal(t, f.r[1].Primary(f.config.Name, true), backend.ErrRefused,
		"Multiple primaries not allowed by config", "a second primary with force")
	if s := f.status(1); s.Role != backend.Secondary {
		t.Errorf("%s is %s after refused promotions", f.nodes[1], s.Role)
	}
	if p := f.peer(1, 0); p.Role != backend.Primary {
		t.Errorf("%s sees %s as %s, want Primary", f.nodes[1], f.nodes[0], p.Role)
	}
}

func testDemoteOpen(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	f.must(f.r[0].Primary(f.config.Name, false), "Primary on %s", f.nodes[0])
	dev, err := f.r[0].Open(f.config.Name)
	f.must(err, "Open on %s", f.nodes[0])
	expectRefusal(t, f.r[0].Secondary(f.config.Name), backend.ErrBusy, "Device is held open by someone", "demoting an open device")
	expectRefusal(t, f.r[0].Down(f.config.Name), backend.ErrBusy, "Device is held open by someone", "downing an open device")
	if s := f.status(0); s.Role != backend.Primary {
		t.Errorf("%s is %s after a refused demotion", f.nodes[0], s.Role)
	}
	f.must(dev.Close(), "Close")
	f.must(f.r[0].Secondary(f.config.Name), "Secondary after Close")
	f.must(f.r[0].Secondary(f.config.Name), "Secondary again (idempotent)")
}

// Adoption: existing metadata is found and used, never re-created, and the
// replicas come back in sync without a resync.
func testAdoption(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	data := pattern(0x42, 5000)
	f.must(f.r[0].Primary(f.config.Name, false), "Primary")
	f.write(0, 4096, data)
	f.must(f.r[0].Secondary(f.config.Name), "Secondary")
	expectRefusal(t, f.r[0].CreateMetadata(f.config), backend.ErrRefused, "", "create-md on an up resource")
	for i := range f.nodes {
		f.must(f.r[i].Down(f.config.Name), "Down on %s", f.nodes[i])
		f.must(f.r[i].Down(f.config.Name), "Down again on %s (idempotent)", f.nodes[i])
		if _, err := f.r[i].Status(f.config.Name); err == nil {
			t.Errorf("Status of a down resource on %s succeeded", f.nodes[i])
		}
	}
	for i := range f.nodes {
		has, err := f.r[i].HasMetadata(f.config)
		f.must(err, "HasMetadata on %s", f.nodes[i])
		if !has {
			t.Fatalf("HasMetadata after Down on %s = false", f.nodes[i])
		}
		expectRefusal(t, f.r[i].CreateMetadata(f.config), backend.ErrRefused, "", "create-md over existing metadata")
		f.must(f.r[i].Up(f.config), "Up (adopting) on %s", f.nodes[i])
	}
	f.await("adopted replicas UpToDate", f.allUpToDate)
	f.must(f.r[1].Primary(f.config.Name, false), "Primary on %s", f.nodes[1])
	f.expectRead(1, 4096, data, "after adoption")
}

func testUpTwice(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	for i := range f.nodes {
		f.must(f.r[i].Up(f.config), "Up again on %s", f.nodes[i])
	}
	if !f.allUpToDate() {
		t.Errorf("a second Up disturbed the resource:\n%s", f.dump())
	}
	shown, err := f.r[0].Show(f.config.Name)
	f.must(err, "Show")
	if shown.Port != f.config.Port || shown.Minor != f.config.Minor || len(shown.Nodes) != len(f.config.Nodes) {
		t.Errorf("Show = %+v, want %+v", shown, f.config)
	}
}

// A live resource never changes port or minor behind its peers' backs, and
// Show reports what runs, which is what adoption must read.
func testChangedConfig(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	moved := f.config
	moved.Port = f.config.Port + 1
	moved.Nodes = nil
	for _, n := range f.config.Nodes {
		n.Address = f.site.Address(n.Node, moved.Port)
		moved.Nodes = append(moved.Nodes, n)
	}
	expectRefusal(t, f.r[0].Up(moved), backend.ErrRefused, "", "Up with a changed port")
	renumbered := f.config
	renumbered.Minor = f.config.Minor + 1
	expectRefusal(t, f.r[0].Up(renumbered), backend.ErrRefused, "", "Up with a changed minor")
	shown, err := f.r[0].Show(f.config.Name)
	f.must(err, "Show")
	if shown.Port != f.config.Port || shown.Minor != f.config.Minor {
		t.Errorf("Show reports port %d minor %d, want the live %d and %d", shown.Port, shown.Minor, f.config.Port, f.config.Minor)
	}
	if !f.allUpToDate() {
		t.Errorf("a refused Up disturbed the resource:\n%s", f.dump())
	}
}

// A partition leaves the Primary writing alone; on heal only the blocks it
// wrote meanwhile move.
func testPartition(t *testing.T, newSite func(*testing.T, int) Site, n int) {
	f := newFixture(t, newSite, n)
	f.start()
	f.must(f.r[0].Primary(f.config.Name, false), "Primary")
	base := pattern(0x11, 16*4096)
	f.write(0, 0, base)
	cut := n - 1
	f.site.Partition(f.nodes[0], f.nodes[cut])
	changed := map[int64][]byte{4096: pattern(0x21, 4096), 9 * 4096: pattern(0x22, 4096), 2 << 20: pattern(0x23, 4096)}
	for _, offset := range []int64{4096, 9 * 4096, 2 << 20} {
		f.write(0, offset, changed[offset])
	}
	f.await("the primary to lose its peer", func() bool {
		p, ok := f.quietPeer(0, cut)
		return ok && p.Connection != backend.Connected
	})
	p := f.peer(0, cut)
	if p.Connection != backend.Connecting || p.Disk != backend.Outdated {
		t.Errorf("primary sees the cut-off peer as %s %s, want Connecting Outdated", p.Connection, p.Disk)
	}
	if p.OutOfSyncBytes != 3*4096 {
		t.Errorf("primary has %d bytes out of sync with the cut-off peer, want exactly the %d written", p.OutOfSyncBytes, 3*4096)
	}
	f.await("the cut-off peer to lose the primary", func() bool {
		p, ok := f.quietPeer(cut, 0)
		return ok && p.Connection == backend.Connecting
	})
	f.site.Heal(f.nodes[0], f.nodes[cut])
	// Only the changed blocks may move: a full sync would show the whole
	// device out of sync while it runs.
	var mostOutOfSync uint64
	f.await("resync after heal", func() bool {
		if p, ok := f.quietPeer(0, cut); ok {
			mostOutOfSync = max(mostOutOfSync, p.OutOfSyncBytes)
		}
		if p, ok := f.quietPeer(cut, 0); ok {
			mostOutOfSync = max(mostOutOfSync, p.OutOfSyncBytes)
		}
		return f.allUpToDate()
	})
	if mostOutOfSync > 3*4096 {
		t.Errorf("resync after heal had up to %d bytes out of sync, want at most the %d written", mostOutOfSync, 3*4096)
	}
	f.must(f.r[0].Secondary(f.config.Name), "Secondary")
	f.must(f.r[cut].Primary(f.config.Name, false), "Primary on the resynced node")
	want := append([]byte(nil), base...)
	copy(want[4096:], changed[4096])
	copy(want[9*4096:], changed[9*4096])
	f.expectRead(cut, 0, want, "after resync")
	f.expectRead(cut, 2<<20, changed[2<<20], "after resync")
}

// A Secondary that left a Primary gracefully is Outdated: it may be promoted
// only by force, which says "my data is the truth" out loud.
func testOutdatedNeedsForce(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	f.must(f.r[0].Primary(f.config.Name, false), "Primary")
	f.must(f.r[1].Down(f.config.Name), "Down on the secondary")
	f.site.Partition(f.nodes[0], f.nodes[1])
	f.must(f.r[1].Up(f.config), "Up on the secondary")
	if s := f.status(1); s.Disk != backend.Outdated {
		t.Errorf("a secondary that left its primary is %s, want Outdated", s.Disk)
	}
	if p := f.peer(1, 0); p.Connection != backend.Connecting {
		t.Errorf("partitioned secondary sees its primary %s, want Connecting", p.Connection)
	}
	expectRefusal(t, f.r[1].Primary(f.config.Name, false), backend.ErrRefused, "State change failed",
		"promoting an Outdated secondary")
	if s := f.status(1); s.Role != backend.Secondary {
		t.Errorf("refused promotion left %s %s", f.nodes[1], s.Role)
	}
	f.must(f.r[1].Primary(f.config.Name, true), "forced promotion of an Outdated secondary")
	if s := f.status(1); s.Role != backend.Primary || s.Disk != backend.UpToDate {
		t.Errorf("forced promotion left %s %s %s, want Primary UpToDate", f.nodes[1], s.Role, s.Disk)
	}
}

// With fencing, a Secondary that lost its Primary without a goodbye cannot
// tell a crash from a partition: promoting it needs force.
func testDisconnectedNeedsForce(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	f.must(f.r[0].Primary(f.config.Name, false), "Primary")
	f.site.Partition(f.nodes[0], f.nodes[1])
	f.await("the secondary to lose the primary", func() bool {
		p, ok := f.quietPeer(1, 0)
		return ok && p.Connection == backend.Connecting
	})
	expectRefusal(t, f.r[1].Primary(f.config.Name, false), backend.ErrRefused,
		"Refusing to be Primary while peer is not outdated", "promoting a secondary cut off from its primary")
	if s := f.status(1); s.Disk != backend.UpToDate || s.Role != backend.Secondary {
		t.Errorf("cut-off secondary is %s %s, want Secondary UpToDate", s.Role, s.Disk)
	}
}

// Both sides wrote while apart: DRBD detects the split brain on reconnect,
// refuses to connect, and leaves each side's writes where they are. The
// first side is demoted before the heal, so that only split-brain detection
// (after-sb-1pri disconnect), not the two-primaries rule, keeps its writes
// from being overwritten by a resync.
func testSplitBrain(t *testing.T, newSite func(*testing.T, int) Site) {
	f := newFixture(t, newSite, 2)
	f.start()
	f.must(f.r[0].Primary(f.config.Name, false), "Primary")
	base := pattern(0x01, 8*4096)
	f.write(0, 0, base)
	f.site.Partition(f.nodes[0], f.nodes[1])
	f.await("both sides to lose each other", func() bool {
		a, okA := f.quietPeer(0, 1)
		b, okB := f.quietPeer(1, 0)
		return okA && okB && a.Connection != backend.Connected && b.Connection != backend.Connected
	})
	fromA, fromB := pattern(0xaa, 4096), pattern(0xbb, 4096)
	f.write(0, 2*4096, fromA)
	f.must(f.r[1].Primary(f.config.Name, true), "forced promotion on the far side")
	f.write(1, 5*4096, fromB)
	f.must(f.r[0].Secondary(f.config.Name), "demoting the first side")
	f.site.Heal(f.nodes[0], f.nodes[1])
	f.await("split brain: both StandAlone", func() bool {
		a, okA := f.quietPeer(0, 1)
		b, okB := f.quietPeer(1, 0)
		return okA && okB && a.Connection == backend.StandAlone && b.Connection == backend.StandAlone
	})
	f.site.Pass(30 * time.Second)
	for i, j := range []int{1, 0} {
		if p := f.peer(i, j); p.Connection != backend.StandAlone {
			t.Errorf("split brain resolved itself: %s sees %s %s", f.nodes[i], p.Node, p.Connection)
		}
		if s := f.status(i); s.Disk != backend.UpToDate {
			t.Errorf("after split brain %s is %s, want UpToDate (its own writes, not a resync)", f.nodes[i], s.Disk)
		}
	}
	f.must(f.r[0].Primary(f.config.Name, true), "promoting the first side again to read it")
	f.expectRead(0, 2*4096, fromA, "side A keeps its write")
	f.expectRead(0, 5*4096, base[5*4096:6*4096], "side A never got side B's write")
	f.expectRead(1, 5*4096, fromB, "side B keeps its write")
	f.expectRead(1, 2*4096, base[2*4096:3*4096], "side B never got side A's write")
}
