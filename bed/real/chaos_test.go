package real

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"

	"github.com/baton-dr/baton/bed"
)

func TestAPartitionIsANetworkChaosTheNodesTableDrops(t *testing.T) {
	oneWay := partitionChaos(SiteA, SiteB, "10.250.0.3", false)
	if oneWay.Spec.Action != chaosv1alpha1.PartitionAction || oneWay.Spec.Direction != chaosv1alpha1.To ||
		oneWay.Spec.Selector.Nodes[0] != "baton-site-a-control-plane" || oneWay.Spec.ExternalTargets[0] != "10.250.0.3" {
		t.Fatalf("one-way partition: %+v", oneWay.Spec)
	}
	node, rules, err := nftRules(oneWay)
	if err != nil || node != SiteA.Node() || len(rules) != 1 || rules[0].ingress || rules[0].lossPercent != 100 {
		t.Fatalf("one way: node %s rules %+v err %v", node, rules, err)
	}
	_, rules, err = nftRules(partitionChaos(SiteA, Hub, "10.250.0.2", true))
	if err != nil || len(rules) != 2 || rules[0].ingress == rules[1].ingress {
		t.Fatalf("both ways: rules %+v err %v", rules, err)
	}
	text := chaosRules(rules)
	for _, want := range []string{"hook postrouting", "ip daddr 10.250.0.2 counter drop", "hook prerouting", "ip saddr 10.250.0.2 counter drop"} {
		if !strings.Contains(text, want) {
			t.Errorf("the table lacks %q:\n%s", want, text)
		}
	}
	if healed := chaosRules(nil); healed != "table inet baton-chaos\ndelete table inet baton-chaos\n" {
		t.Errorf("healing renders %q", healed)
	}
}

func TestLossIsAShareOfDropsAndDelayIsRefused(t *testing.T) {
	loss := partitionChaos(SiteB, SiteA, "10.250.0.4", false)
	loss.Spec.Action = chaosv1alpha1.LossAction
	loss.Spec.Loss = &chaosv1alpha1.LossSpec{Loss: "25"}
	_, rules, err := nftRules(loss)
	if err != nil || rules[0].lossPercent != 25 || !strings.Contains(chaosRules(rules), "numgen random mod 100 < 25 drop") {
		t.Fatalf("loss: %+v %v", rules, err)
	}
	delay := loss
	delay.Spec.Action = chaosv1alpha1.DelayAction
	if _, _, err := nftRules(delay); err == nil || !strings.Contains(err.Error(), "netem") {
		t.Errorf("delay: %v", err)
	}
	elsewhere := partitionChaos(SiteA, SiteB, "10.250.0.3", false)
	elsewhere.Spec.Selector.Nodes = []string{"someone-elses-node"}
	if _, _, err := nftRules(elsewhere); err == nil {
		t.Error("a node that is not the bed's was accepted")
	}
	named := partitionChaos(SiteA, SiteB, "baton-site-b", false)
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
	_, both, _ := nftRules(partitionChaos(SiteA, SiteB, "10.250.0.3", true))
	loss := partitionChaos(SiteA, Hub, "10.250.0.2", false)
	loss.Spec.Action, loss.Spec.Loss = chaosv1alpha1.LossAction, &chaosv1alpha1.LossSpec{Loss: "30"}
	_, lossy, _ := nftRules(loss)
	cmd := exec.Command("nft", "--check", "-f", "-")
	cmd.Stdin = strings.NewReader(chaosRules(append(both, lossy...)))
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
	want := []chaosCut{{from: Hub, to: SiteB}, {from: SiteA, to: Hub, bothWays: true}, {from: SiteA, to: SiteB, bothWays: true}}
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
