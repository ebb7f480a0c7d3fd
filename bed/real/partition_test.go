package real

import (
	"strings"
	"testing"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
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
	names := append(StorageZFSDRBD.nodeNames(SiteA), Hub.Node())
	tables, err := nodeTables(nil, names)
	if err != nil || len(tables) != len(names) {
		t.Fatalf("tables %v, err %v", tables, err)
	}
	for _, name := range names {
		if tables[name] != chaosRules(nil) {
			t.Errorf("%s: healing renders %q", name, tables[name])
		}
	}
	worker := partitionChaos(SiteA, SiteB, StorageZFSDRBD.StorageNodes(SiteA), []string{"10.250.0.4"}, false)
	if _, err := nodeTables([]chaosv1alpha1.NetworkChaos{worker}, []string{Hub.Node(), SiteA.Node(), SiteB.Node()}); err == nil ||
		!strings.Contains(err.Error(), "baton-site-a-worker") {
		t.Errorf("a worker the bed does not run: %v", err)
	}
	stranger := partitionChaos(SiteA, SiteB, []string{SiteA.Node(), "baton-site-a-worker3"}, []string{"10.250.0.4"}, false)
	if _, _, err := nftRules(stranger); err == nil {
		t.Error("a node no mode makes was accepted")
	}
}
