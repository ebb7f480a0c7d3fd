package real

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/baton-dr/baton/bed/real/infra"
)

// partitionChaos describes a cut of from's nodes (fromNodes, by name) from
// to's (toAddresses, their addresses) as chaos-mesh's NetworkChaos: action
// partition, the nodes selected by name, the peer's addresses as external
// targets, direction to (one way: what from sends is lost) or both. It is
// named for the two clusters, however many nodes they have. The same
// object, applied to a cluster running chaos-mesh, partitions its pods on
// those nodes the same way.
func partitionChaos(from, to infra.Cluster, fromNodes, toAddresses []string, bothWays bool) chaosv1alpha1.NetworkChaos {
	direction := chaosv1alpha1.To
	if bothWays {
		direction = chaosv1alpha1.Both
	}
	return chaosv1alpha1.NetworkChaos{
		TypeMeta:   metav1.TypeMeta{APIVersion: "chaos-mesh.org/v1alpha1", Kind: "NetworkChaos"},
		ObjectMeta: metav1.ObjectMeta{Name: "partition-" + from.Name + "-" + to.Name, Namespace: "baton-chaos"},
		Spec: chaosv1alpha1.NetworkChaosSpec{
			PodSelector: chaosv1alpha1.PodSelector{Mode: chaosv1alpha1.AllMode,
				Selector: chaosv1alpha1.PodSelectorSpec{Nodes: slices.Clone(fromNodes)}},
			Action:          chaosv1alpha1.PartitionAction,
			Direction:       direction,
			ExternalTargets: slices.Clone(toAddresses),
		},
	}
}

// bedNodeNames are the names of every node either storage mode gives the
// bed's clusters: each one's control plane, and a zfs-drbd site's storage
// workers.
func bedNodeNames() []string {
	var out []string
	for _, c := range infra.Clusters() {
		out = append(out, infra.StorageZFSDRBD.NodeNames(c)...)
	}
	return out
}

// nftRules turns one NetworkChaos into the rules each node it selects
// holds, refusing what this injector does not do -- clearly, so that no
// scenario believes a fault happened that did not: selections other than
// bed nodes by name, targets other than addresses, and delay (tc netem,
// which this kernel lacks).
func nftRules(o chaosv1alpha1.NetworkChaos) (nodes []string, rules []nftRule, err error) {
	refuse := func(format string, args ...any) ([]string, []nftRule, error) {
		return nil, nil, fmt.Errorf("NetworkChaos %s: %s", o.Name, fmt.Sprintf(format, args...))
	}
	spec := o.Spec
	nodes = spec.Selector.Nodes
	known := bedNodeNames()
	if len(nodes) == 0 || slices.ContainsFunc(nodes, func(n string) bool { return !slices.Contains(known, n) }) {
		return refuse("selects nodes %v: the injector acts on the bed's nodes, by name", nodes)
	}
	if spec.Target != nil {
		return refuse("targets pods: the injector cuts nodes from addresses (externalTargets)")
	}
	if len(spec.ExternalTargets) == 0 {
		return refuse("names no externalTargets")
	}
	loss := 100
	switch spec.Action {
	case chaosv1alpha1.PartitionAction:
	case chaosv1alpha1.LossAction:
		if spec.Loss == nil {
			return refuse("action loss without a loss spec")
		}
		f, err := strconv.ParseFloat(spec.Loss.Loss, 64)
		if err != nil || f < 0 || f > 100 {
			return refuse("loss %q is not a percentage", spec.Loss.Loss)
		}
		loss = int(f)
	case chaosv1alpha1.DelayAction:
		return refuse("delay needs tc netem, which this kernel lacks (sch_netem)")
	default:
		return refuse("action %q: the injector does partition and loss", spec.Action)
	}
	var directions []bool // ingress?
	switch spec.Direction {
	case chaosv1alpha1.To, "":
		directions = []bool{false}
	case chaosv1alpha1.From:
		directions = []bool{true}
	case chaosv1alpha1.Both:
		directions = []bool{false, true}
	default:
		return refuse("direction %q: want to, from or both", spec.Direction)
	}
	for _, target := range spec.ExternalTargets {
		addr, err := netip.ParseAddr(target)
		if err != nil || !addr.Is4() {
			return refuse("external target %q is not an IPv4 address (the bed's nodes have those)", target)
		}
		for _, ingress := range directions {
			rules = append(rules, nftRule{name: o.Name, address: addr.String(), ingress: ingress, lossPercent: loss})
		}
	}
	if strings.ContainsAny(o.Name, "\"\\\n") {
		return refuse("its name cannot go into an nft comment")
	}
	return slices.Clone(nodes), rules, nil
}
