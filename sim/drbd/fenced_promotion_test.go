package drbd

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// The sequence of ci/vmtest's TestForcedPromotionAfterPrimaryPowerCut on the
// simulation, so that both sides assert the same observations: the Primary
// loses power behind a partition; its Secondary refuses promotion without
// force (fencing resource-only, no fence-peer handler), takes it with force
// and a new generation; the old Primary comes back, syncs from the new one as
// SyncTarget (no split brain) and ends holding what the new Primary wrote.
func TestForcedPromotionAfterPrimaryPowerCut(t *testing.T) {
	const mib = 1 << 20
	site := newSimSite(t, 2, nil)
	res := &simResource{t: t, site: site, config: backend.ResourceConfig{Name: "r0", Minor: 2002, Port: 7102}}
	for i, node := range site.names {
		res.must(site.CreateVolume(node, "r0", 64*mib))
		res.config.Nodes = append(res.config.Nodes, backend.ResourceNode{Node: node, NodeID: uint8(i), Address: site.Address(node, 7102), Volume: "r0"})
		res.r = append(res.r, site.Replicator(node))
	}
	survivor, crashed := 0, 1 // nodea and nodeb of the vmtest story, which uses the same layout
	res.start()
	res.must(res.r[crashed].Primary("r0", false))
	first, second := fill(1, 16*mib), fill(2, 4*mib)
	res.write(crashed, 4*mib, first, true)

	before := site.cluster.replicaOf("r0", "node-0").md.sb.current
	// The power cut comes first: a Primary that saw the partition before it
	// died would have started a new generation (8.4), and its return would be
	// a split brain (TestLivePrimaryReplacedByForceIsASplitBrain). The vmtest
	// story cuts the link and the disk in the same instant for that reason.
	site.crash("node-1")
	site.Partition("node-0", "node-1")
	// The old Primary's activity log: the four 4 MiB extents it wrote, flushed
	// or not, are out of sync toward its peer (drbdmeta apply-al at the next
	// attach; DRBD 8.4 logged "16 MB (4096 bits) marked out-of-sync").
	if oos := site.cluster.store[storeKey{"node-1", "r0"}].bitmapFor("node-0").bytes(); oos != 16*mib {
		t.Errorf("the crashed Primary has %d bytes out of sync toward its peer, want its activity log's 16 MiB", oos)
	}
	if st, p := res.status(survivor), res.peer(survivor, "node-1"); st.Role != backend.Secondary || st.Disk != backend.UpToDate ||
		p.Connection != backend.Connecting {
		t.Fatalf("after the power cut the survivor is %s %s, its peer %s: want Secondary UpToDate, peer Connecting", st.Role, st.Disk, p.Connection)
	}
	if now := site.cluster.replicaOf("r0", "node-0").md.sb.current; now != before {
		t.Errorf("losing the Primary moved the survivor's generation from %x to %x", before, now)
	}

	wantRefusal(t, res.r[survivor].Primary("r0", false), backend.ErrRefused,
		"State change failed: (-7) Refusing to be Primary while peer is not outdated")
	res.must(res.r[survivor].Primary("r0", true))
	if !strings.Contains(dumpLog(site), "Forced into split brain situation!") {
		t.Errorf("the forced promotion does not say so:%s", dumpLog(site))
	}
	md := site.cluster.replicaOf("r0", "node-0").md
	if md.sb.current == before || md.bitmapUUID["node-1"] != before {
		t.Errorf("after the forced promotion current %x (was %x), bitmap UUID %x: want a new current and the old one as bitmap UUID",
			md.sb.current, before, md.bitmapUUID["node-1"])
	}
	if p := res.peer(survivor, "node-1"); p.Connection != backend.Connecting || p.Disk != backend.Outdated {
		t.Errorf("the new Primary sees its lost peer %s %s, want Connecting Outdated", p.Connection, p.Disk)
	}
	if got := res.read(survivor, 4*mib, len(first)); !bytes.Equal(got, first) {
		t.Fatal("the new Primary does not read what the old one wrote")
	}
	res.write(survivor, 8*mib, second, true)
	if p := res.peer(survivor, "node-1"); p.OutOfSyncBytes != 4*mib {
		t.Errorf("the new Primary has %d bytes out of sync toward its lost peer, want the 4 MiB it wrote", p.OutOfSyncBytes)
	}
	resyncedBefore, identicalBefore := site.cluster.Stats().ResyncedBytes, site.cluster.Stats().ResyncIdenticalBytes

	site.Heal("node-0", "node-1")
	site.cluster.Restart("node-1")
	res.must(res.r[crashed].Up(res.config))
	if !site.Await(res.allUpToDate) {
		t.Fatalf("the old Primary did not catch up:%s", dumpLog(site))
	}
	log := dumpLog(site)
	if !strings.Contains(log, "node-0->node-1: resync") {
		t.Errorf("no resync from the new Primary to the old one:%s", log)
	}
	if strings.Contains(log, "Split-Brain") || strings.Contains(log, "StandAlone") {
		t.Errorf("the old Primary's return was refused:%s", log)
	}
	if moved := site.cluster.Stats().ResyncedBytes - resyncedBefore; moved != 16*mib {
		t.Errorf("the resync moved %d bytes, want 16 MiB: the old Primary's activity log holds what the new one wrote", moved)
	}
	// csums-alg: of the 16 MiB, only the 4 MiB the new Primary wrote differ;
	// the rest is compared, not rewritten (ci/vmtest checks the same through
	// the zvol's snapshot).
	if same := site.cluster.Stats().ResyncIdenticalBytes - identicalBefore; same != 12*mib {
		t.Errorf("the resync found %d bytes identical, want 12 MiB", same)
	}
	want := append([]byte(nil), first...)
	copy(want[4*mib:], second)
	if got := res.onVolume("node-1", 4*mib, len(want)); !bytes.Equal(got, want) {
		t.Error("the old Primary's volume does not hold what the new Primary wrote")
	}
}

// The sequence of ci/vmtest's TestLivePrimaryReplacedByForceIsASplitBrain: a
// Primary cut off but alive starts a new generation the moment it loses its
// peer (DRBD 8.4), writes or not; its Secondary, force-promoted, starts
// another; when the link comes back, after the old Primary was demoted, the
// two generations are a split brain and both sides stay StandAlone.
func TestLivePrimaryReplacedByForceIsASplitBrain(t *testing.T) {
	site := newSimSite(t, 2, nil)
	res := newSimResource(t, site, "r0", 2)
	survivor, cutOff := 0, 1
	res.start()
	res.must(res.r[cutOff].Primary("r0", false))
	res.write(cutOff, 0, fill(1, 4096), true)
	parent := site.cluster.replicaOf("r0", "node-1").md.sb.current

	site.Partition("node-0", "node-1")
	md := site.cluster.replicaOf("r0", "node-1").md
	if md.sb.current == parent || md.bitmapUUID["node-0"] != parent {
		t.Errorf("the cut-off Primary holds generation %x, bitmap UUID %x: want a new one over %x at once", md.sb.current, md.bitmapUUID["node-0"], parent)
	}
	res.must(res.r[survivor].Primary("r0", true))
	res.must(res.r[cutOff].Secondary("r0"))
	site.Heal("node-0", "node-1")
	site.Pass(time.Minute)
	for i, peer := range []string{"node-1", "node-0"} {
		if p := res.peer(i, peer); p.Connection != backend.StandAlone {
			t.Errorf("%s sees %s %s after the link came back, want StandAlone (split brain)", site.names[i], peer, p.Connection)
		}
	}
	if log := dumpLog(site); !strings.Contains(log, "Split-Brain detected but unresolved, dropping connection!") {
		t.Errorf("no split brain logged:%s", log)
	}
}
