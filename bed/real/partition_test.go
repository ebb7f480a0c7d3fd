package real

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/real/infra"
)

// TestParseCountersSumsEachObjectsRules reads a listing as nft prints the
// chaos table back: one object's egress and ingress rules summed, a loss
// rule's too, the chain headers skipped.
func TestParseCountersSumsEachObjectsRules(t *testing.T) {
	listing := `table inet baton-chaos {
	chain egress {
		type filter hook postrouting priority 300; policy accept;
		ip daddr 10.250.0.3 counter packets 12 bytes 720 drop comment "partition-baton-site-a-baton-site-b"
		ip daddr 10.250.0.4 counter packets 3 bytes 180 numgen random mod 100 < 30 drop comment "loss-baton-site-a-baton-hub"
	}
	chain ingress {
		type filter hook prerouting priority -300; policy accept;
		ip saddr 10.250.0.3 counter packets 30 bytes 2400 drop comment "partition-baton-site-a-baton-site-b"
	}
}
`
	got := parseCounters(listing)
	want := map[string]uint64{"partition-baton-site-a-baton-site-b": 42, "loss-baton-site-a-baton-hub": 3}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d packets, want %d", name, got[name], n)
		}
	}
}

// TestEveryNodeGetsATableAndOnlyTheBedsAreSelected: healing (no objects)
// empties every node's table, the workers' too; an object selecting a node
// the bed does not run now -- a zfs-drbd worker on a btrfs bed -- or one no
// mode makes is refused rather than cut nothing.
func TestEveryNodeGetsATableAndOnlyTheBedsAreSelected(t *testing.T) {
	names := append(infra.StorageZFSDRBD.NodeNames(infra.SiteA), infra.Hub.Node())
	tables, err := nodeTables(testTable, nil, names)
	if err != nil || len(tables) != len(names) {
		t.Fatalf("tables %v, err %v", tables, err)
	}
	for _, name := range names {
		if tables[name] != chaosRules(testTable, nil) {
			t.Errorf("%s: healing renders %q", name, tables[name])
		}
	}
	worker := partitionChaos(infra.SiteA, infra.SiteB, infra.StorageZFSDRBD.StorageNodes(infra.SiteA), []string{"10.250.0.4"}, false)
	if _, err := nodeTables(testTable, []chaosv1alpha1.NetworkChaos{worker}, []string{infra.Hub.Node(), infra.SiteA.Node(), infra.SiteB.Node()}); err == nil ||
		!strings.Contains(err.Error(), "baton-site-a-worker") {
		t.Errorf("a worker the bed does not run: %v", err)
	}
	stranger := partitionChaos(infra.SiteA, infra.SiteB, []string{infra.SiteA.Node(), "baton-site-a-worker3"}, []string{"10.250.0.4"}, false)
	if _, _, err := nftRules(stranger); err == nil {
		t.Error("a node no mode makes was accepted")
	}
}

// testTable is a bed's chaos table, as chaosTableOf names it.
var testTable = chaosTableOf("5ce7a41")

// TestOnlyTablesNoBedHereOwnsAreLeftOvers reads nft's table listing: the
// bed's tables are told from others by their prefix, and of them only
// those no bed of this process owns -- a crashed run's, or the name before
// tables were per bed -- are left over; a bed's table stops being its own
// when it closes.
func TestOnlyTablesNoBedHereOwnsAreLeftOvers(t *testing.T) {
	mine, crashed := chaosTableOf("6001"), chaosTableOf("5ffe")
	listing := "table inet filter\ntable ip nat\ntable " + mine + "\ntable " + crashed + "\ntable inet baton-chaos\n"
	tables := chaosTables(listing)
	if !slices.Equal(tables, []string{mine, crashed, "inet baton-chaos"}) {
		t.Fatalf("tables %q", tables)
	}
	inForce.own(mine)
	defer inForce.release(mine)
	if left := leftoverTables(listing, inForce.owns); !slices.Equal(left, []string{crashed, "inet baton-chaos"}) {
		t.Errorf("left over: %q", left)
	}
	inForce.release(mine)
	if left := leftoverTables(listing, inForce.owns); !slices.Contains(left, mine) {
		t.Errorf("a closed bed's table is not left over: %q", left)
	}
}

// TestABedBesideAnotherDoesNotReachWhatTheOtherCutOff: the beds of one
// process share the nodes, so a site one cuts off from the hub is not
// reached by the other's hub either -- one way is enough -- while a cut
// between the sites alone leaves both reached; once the cutting bed heals,
// the other reaches the site again.
func TestABedBesideAnotherDoesNotReachWhatTheOtherCutOff(t *testing.T) {
	wordpress, gitea := chaosTableOf("a1"), chaosTableOf("a2")
	inForce.own(wordpress)
	inForce.own(gitea)
	defer inForce.release(wordpress)
	defer inForce.release(gitea)
	inForce.set(wordpress, []bed.Path{{From: infra.SiteA.Site, To: infra.SiteB.Site}, {From: infra.SiteB.Site, To: infra.SiteA.Site}}, time.Now())
	if !reachedThrough(inForce.others(gitea), infra.SiteA.Site) || !reachedThrough(inForce.others(gitea), infra.SiteB.Site) {
		t.Error("a cut between the sites stopped the hub reaching one")
	}
	inForce.set(wordpress, []bed.Path{{From: infra.SiteA.Site, To: bed.Hub}}, time.Now())
	if reachedThrough(inForce.others(gitea), infra.SiteA.Site) {
		t.Error("the other bed's hub reaches a site cut off from it one way")
	}
	if !reachedThrough(inForce.others(wordpress), infra.SiteA.Site) {
		t.Error("a bed's own cuts were counted as another's")
	}
	inForce.set(wordpress, nil, time.Now())
	if !reachedThrough(inForce.others(gitea), infra.SiteA.Site) {
		t.Error("healed, the site is still not reached")
	}
}

// TestTheCutsBesideAreSpansOfTheOtherBeds: the beside bed's cuts, from the
// first cut to the last heal, are one span for the bed beside it -- counted
// as a fault for its RPO bound -- and none for the bed that made them;
// a span that ended before a bed began is not its.
func TestTheCutsBesideAreSpansOfTheOtherBeds(t *testing.T) {
	wordpress, gitea := chaosTableOf("s1"), chaosTableOf("s2")
	inForce := newCutRegistry()
	inForce.own(wordpress)
	inForce.own(gitea)
	at := func(s int) time.Time { return time.Date(2026, 12, 5, 0, 0, s, 0, time.UTC) }
	inForce.set(wordpress, []bed.Path{{From: infra.SiteA.Site, To: bed.Hub}}, at(10))
	inForce.set(wordpress, []bed.Path{{From: infra.SiteA.Site, To: bed.Hub}, {From: infra.SiteA.Site, To: infra.SiteB.Site}}, at(20))
	if got := inForce.spansBeside(gitea, at(0)); len(got) != 1 || !got[0].Start.Equal(at(10)) || !got[0].End.IsZero() {
		t.Fatalf("while cut: spans beside %v, want one open from 10 s", got)
	}
	inForce.set(wordpress, nil, at(40))
	inForce.set(gitea, []bed.Path{{From: infra.SiteB.Site, To: bed.Hub}}, at(50))
	if got := inForce.spansBeside(gitea, at(0)); len(got) != 1 || !got[0].Start.Equal(at(10)) || !got[0].End.Equal(at(40)) {
		t.Errorf("healed: spans beside %v, want 10 s to 40 s", got)
	}
	if got := inForce.spansBeside(gitea, at(41)); len(got) != 0 {
		t.Errorf("a bed begun after the heal sees %v beside it", got)
	}
	if got := inForce.spansBeside(wordpress, at(0)); len(got) != 1 || !got[0].Start.Equal(at(50)) {
		t.Errorf("the cutting bed sees %v beside it, want only the other's open span from 50 s", got)
	}
}

// TestBedsMadeInOneSecondRunApart: two beds made at once get runs, hence
// namespaces and chaos tables, of their own.
func TestBedsMadeInOneSecondRunApart(t *testing.T) {
	if a, b := newRun(), newRun(); a == b {
		t.Errorf("two runs named %q", a)
	}
}

// TestACutCountsForTheBedBesideUntilItIsGone: a bed beside sees a path cut
// from before the rules that cut it hold until after the rules that lift it
// are gone -- removing them took 35 s under load, and a move beside that
// believed the path up meanwhile ran its limit against the cut -- and the
// span it is held by ends only then; a heal that failed leaves it cut.
func TestACutCountsForTheBedBesideUntilItIsGone(t *testing.T) {
	wordpress, gitea := chaosTableOf("c1"), chaosTableOf("c2")
	inForce := newCutRegistry()
	inForce.own(wordpress)
	inForce.own(gitea)
	at := func(s int) time.Time { return time.Date(2026, 12, 7, 0, 0, s, 0, time.UTC) }
	clock := 0
	now := func() time.Time { clock += 10; return at(clock) }
	cut := []bed.Path{{From: infra.SiteA.Site, To: infra.SiteB.Site}, {From: infra.SiteB.Site, To: infra.SiteA.Site}}
	seen := func() []bed.Path { return inForce.others(gitea) }
	if err := inForce.change(wordpress, cut, func() error {
		if !slices.Equal(seen(), cut) {
			t.Errorf("while the cut is being made the bed beside sees %v, want %v", seen(), cut)
		}
		return nil
	}, now); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("nft: no answer")
	if err := inForce.change(wordpress, nil, func() error { return failed }, now); !errors.Is(err, failed) {
		t.Fatalf("a failed heal answered %v", err)
	}
	if !slices.Equal(seen(), cut) {
		t.Errorf("after a failed heal the bed beside sees %v, want the cut kept", seen())
	}
	if err := inForce.change(wordpress, nil, func() error {
		if !slices.Equal(seen(), cut) {
			t.Errorf("while the cut is being lifted the bed beside sees %v, want it still cut", seen())
		}
		return nil
	}, now); err != nil {
		t.Fatal(err)
	}
	if len(seen()) != 0 {
		t.Errorf("lifted, the bed beside still sees %v", seen())
	}
	spans := inForce.spansBeside(gitea, at(0))
	if len(spans) != 1 || !spans[0].Start.Equal(at(10)) || !spans[0].End.Equal(at(50)) {
		t.Errorf("spans beside %v, want one from 10 s (before the cut held) to 50 s (after it was gone)", spans)
	}
}
