package real

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/real/infra"
)

func TestAPartitionIsANetworkChaosTheNodesTableDrops(t *testing.T) {
	oneWay := partitionChaos(infra.SiteA, infra.SiteB, []string{infra.SiteA.Node()}, []string{"10.250.0.3"}, false)
	if oneWay.Spec.Action != chaosv1alpha1.PartitionAction || oneWay.Spec.Direction != chaosv1alpha1.To ||
		oneWay.Spec.Selector.Nodes[0] != "baton-site-a-control-plane" || oneWay.Spec.ExternalTargets[0] != "10.250.0.3" {
		t.Fatalf("one-way partition: %+v", oneWay.Spec)
	}
	nodes, rules, err := nftRules(oneWay)
	if err != nil || len(nodes) != 1 || nodes[0] != infra.SiteA.Node() || len(rules) != 1 || rules[0].ingress || rules[0].lossPercent != 100 {
		t.Fatalf("one way: nodes %v rules %+v err %v", nodes, rules, err)
	}
	_, rules, err = nftRules(partitionChaos(infra.SiteA, infra.Hub, []string{infra.SiteA.Node()}, []string{"10.250.0.2"}, true))
	if err != nil || len(rules) != 2 || rules[0].ingress == rules[1].ingress {
		t.Fatalf("both ways: rules %+v err %v", rules, err)
	}
	text := chaosRules(testTable, rules)
	for _, want := range []string{"hook postrouting", "ip daddr 10.250.0.2 counter drop", "hook prerouting", "ip saddr 10.250.0.2 counter drop"} {
		if !strings.Contains(text, want) {
			t.Errorf("the table lacks %q:\n%s", want, text)
		}
	}
	if healed := chaosRules(testTable, nil); healed != "table inet baton-chaos-5ce7a41\ndelete table inet baton-chaos-5ce7a41\n" {
		t.Errorf("healing renders %q", healed)
	}
}

func TestLossIsAShareOfDropsAndDelayIsRefused(t *testing.T) {
	loss := partitionChaos(infra.SiteB, infra.SiteA, []string{infra.SiteB.Node()}, []string{"10.250.0.4"}, false)
	loss.Spec.Action = chaosv1alpha1.LossAction
	loss.Spec.Loss = &chaosv1alpha1.LossSpec{Loss: "25"}
	_, rules, err := nftRules(loss)
	if err != nil || rules[0].lossPercent != 25 || !strings.Contains(chaosRules(testTable, rules), "numgen random mod 100 < 25 drop") {
		t.Fatalf("loss: %+v %v", rules, err)
	}
	delay := loss
	delay.Spec.Action = chaosv1alpha1.DelayAction
	if _, _, err := nftRules(delay); err == nil || !strings.Contains(err.Error(), "netem") {
		t.Errorf("delay: %v", err)
	}
	elsewhere := partitionChaos(infra.SiteA, infra.SiteB, []string{infra.SiteA.Node()}, []string{"10.250.0.3"}, false)
	elsewhere.Spec.Selector.Nodes = []string{"someone-elses-node"}
	if _, _, err := nftRules(elsewhere); err == nil {
		t.Error("a node that is not the bed's was accepted")
	}
	named := partitionChaos(infra.SiteA, infra.SiteB, []string{infra.SiteA.Node()}, []string{"baton-site-b"}, false)
	if _, _, err := nftRules(named); err == nil {
		t.Error("a target that is not an address was accepted")
	}
}

// TestTheTableIsValidNftables has nft check the rendered table (no
// change is made), where nft and root are at hand.
func TestTheTableIsValidNftables(t *testing.T) {
	if _, err := exec.LookPath("nft"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs nft and root")
	}
	_, both, _ := nftRules(partitionChaos(infra.SiteA, infra.SiteB, []string{infra.SiteA.Node()}, []string{"10.250.0.3"}, true))
	loss := partitionChaos(infra.SiteA, infra.Hub, []string{infra.SiteA.Node()}, []string{"10.250.0.2"}, false)
	loss.Spec.Action, loss.Spec.Loss = chaosv1alpha1.LossAction, &chaosv1alpha1.LossSpec{Loss: "30"}
	_, lossy, _ := nftRules(loss)
	cmd := exec.Command("nft", "--check", "-f", "-")
	cmd.Stdin = strings.NewReader(chaosRules(testTable, append(both, lossy...)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft --check: %v: %s", err, out)
	}
}

// The paths bed.Partitions cuts (sorted) become one object a path, on the
// sender's node, except that both paths between two endpoints are one
// object both ways, on the site's node (the first site's between the
// sites); a name that is no endpoint of the real bed is refused.
func TestTheCutsAreOneObjectAPathOrOneBothWays(t *testing.T) {
	got, err := chaosCuts([]bed.Path{{From: "hub", To: "site-a"}, {From: "hub", To: "site-b"}, {From: "site-a", To: "hub"},
		{From: "site-a", To: "site-b"}, {From: "site-b", To: "site-a"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []chaosCut{{from: infra.Hub, to: infra.SiteB}, {from: infra.SiteA, to: infra.Hub, bothWays: true}, {from: infra.SiteA, to: infra.SiteB, bothWays: true}}
	if len(got) != len(want) {
		t.Fatalf("cuts %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].from.Name != want[i].from.Name || got[i].to.Name != want[i].to.Name || got[i].bothWays != want[i].bothWays {
			t.Errorf("cut %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := chaosCuts([]bed.Path{{From: "site-a/node-1", To: "site-b"}}); err == nil {
		t.Error("a node was taken for an endpoint")
	}
}

// bedTopology is the bed's nodes in the mode, each with an address of its
// own (10.250.0.2 onwards, the hub's first), as addressedNodes reads them.
func bedTopology(mode infra.StorageMode) map[string][]nodeAddress {
	out := map[string][]nodeAddress{}
	host := 2
	for _, c := range infra.Clusters() {
		for _, name := range mode.NodeNames(c) {
			out[c.Name] = append(out[c.Name], nodeAddress{name: name, address: fmt.Sprintf("10.250.0.%d", host)})
			host++
		}
	}
	return out
}

// On a btrfs bed a cut is the object it always was: named for the two
// clusters, selecting the one node of the side it cuts off, targeting the
// one address of the other.
func TestABtrfsCutIsOneNodeFromOneAddress(t *testing.T) {
	cuts, err := chaosCuts([]bed.Path{{From: "hub", To: "site-b"}, {From: "site-a", To: "site-b"}, {From: "site-b", To: "site-a"}})
	if err != nil {
		t.Fatal(err)
	}
	objects, err := cutObjects(cuts, bedTopology(infra.StorageBtrfs))
	if err != nil {
		t.Fatal(err)
	}
	want := []chaosv1alpha1.NetworkChaos{
		partitionChaos(infra.Hub, infra.SiteB, []string{"baton-hub-control-plane"}, []string{"10.250.0.4"}, false),
		partitionChaos(infra.SiteA, infra.SiteB, []string{"baton-site-a-control-plane"}, []string{"10.250.0.4"}, true),
	}
	if !reflect.DeepEqual(objects, want) {
		t.Fatalf("objects %+v, want %+v", objects, want)
	}
	if objects[0].Name != "partition-baton-hub-baton-site-b" || objects[1].Name != "partition-baton-site-a-baton-site-b" {
		t.Errorf("names %s, %s", objects[0].Name, objects[1].Name)
	}
}

// On a zfs-drbd bed a cut between the sites holds every node of each: each
// of site A's three nodes drops what it sends to, and receives from, each
// of site B's three addresses, and nothing inside a site (DRBD's own
// traffic between a site's storage nodes) or to the hub.
func TestAZFSDRBDCutHoldsEveryNodeOfBothSites(t *testing.T) {
	topology := bedTopology(infra.StorageZFSDRBD)
	cuts, err := chaosCuts([]bed.Path{{From: "site-a", To: "site-b"}, {From: "site-b", To: "site-a"}})
	if err != nil {
		t.Fatal(err)
	}
	objects, err := cutObjects(cuts, topology)
	if err != nil || len(objects) != 1 || objects[0].Name != "partition-baton-site-a-baton-site-b" {
		t.Fatalf("objects %+v, err %v", objects, err)
	}
	spec := objects[0].Spec
	if !slices.Equal(spec.Selector.Nodes, infra.StorageZFSDRBD.NodeNames(infra.SiteA)) || len(spec.ExternalTargets) != 3 {
		t.Fatalf("selects %v, targets %v", spec.Selector.Nodes, spec.ExternalTargets)
	}
	var names []string
	for _, c := range infra.Clusters() {
		for _, n := range topology[c.Name] {
			names = append(names, n.name)
		}
	}
	tables, err := nodeTables(testTable, objects, names)
	if err != nil || len(tables) != 7 {
		t.Fatalf("%d tables, err %v", len(tables), err)
	}
	for _, c := range infra.Clusters() {
		for _, n := range topology[c.Name] {
			table := tables[n.name]
			if c.Name != infra.SiteA.Name {
				if table != chaosRules(testTable, nil) {
					t.Errorf("%s holds rules:\n%s", n.name, table)
				}
				continue
			}
			for _, other := range topology[infra.SiteB.Name] {
				for _, want := range []string{"ip daddr " + other.address + " counter drop", "ip saddr " + other.address + " counter drop"} {
					if !strings.Contains(table, want) {
						t.Errorf("%s lacks %q:\n%s", n.name, want, table)
					}
				}
			}
			for _, inside := range append(slices.Clone(topology[infra.SiteA.Name]), topology[infra.Hub.Name]...) {
				if strings.Contains(table, " "+inside.address+" ") {
					t.Errorf("%s cuts %s (%s):\n%s", n.name, inside.name, inside.address, table)
				}
			}
		}
	}
	if _, err := cutObjects(cuts, map[string][]nodeAddress{infra.SiteA.Name: topology[infra.SiteA.Name]}); err == nil {
		t.Error("a cut toward a cluster without nodes was made")
	}
}
