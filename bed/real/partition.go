package real

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"

	"github.com/baton-dr/baton/bed/real/infra"
)

// chaosPrefix names the nftables tables the bed's partitions live in, in
// each node container's network namespace: one table a bed (chaosTableOf
// its run), so that beds running side by side in one process (batonctl
// scenario run --side-by-side) each lift only their own cuts, and a table
// no bed of this process owns is found as a crashed run's and removed.
const chaosPrefix = "baton-chaos"

// chaosTableOf is the table of the bed whose run is run, as nft names it
// (family, then name).
func chaosTableOf(run string) string { return "inet " + chaosPrefix + "-" + run }

// A fault is described as chaos-mesh describes it -- a NetworkChaos
// object (chaos.go) -- and injected here: each object selects nodes of
// the bed (selector.nodes: every node of the side it cuts off) and names
// the addresses it cuts (externalTargets: every node of the other side);
// each selected node's table holds one rule per object and target: an
// egress chain (postrouting, after the service NAT, so pods' packets and
// NodePorts' replies are caught as well as the node's own) for direction
// to, an ingress chain (prerouting, before conntrack's NAT) for from,
// both for both. A partition drops; a loss drops its share (nft's
// numgen). The first two statements make the load idempotent (nft's own
// idiom): the table made if missing, deleted, then made whole.
func chaosRules(table string, rules []nftRule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s\ndelete table %s\n", table, table)
	if len(rules) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "table %s {\n", table)
	for _, chain := range []struct{ name, hook, priority, field string }{
		{"egress", "postrouting", "300", "daddr"}, {"ingress", "prerouting", "-300", "saddr"}} {
		fmt.Fprintf(&b, "\tchain %s {\n\t\ttype filter hook %s priority %s; policy accept;\n", chain.name, chain.hook, chain.priority)
		for _, r := range rules {
			if r.ingress != (chain.name == "ingress") {
				continue
			}
			verdict := "drop"
			if r.lossPercent < 100 {
				verdict = fmt.Sprintf("numgen random mod 100 < %d drop", r.lossPercent)
			}
			fmt.Fprintf(&b, "\t\tip %s %s counter %s comment \"%s\"\n", chain.field, r.address, verdict, r.name)
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// nftRule is one address a node drops packets to (egress) or from
// (ingress), all of them or lossPercent of them.
type nftRule struct {
	name        string
	address     string
	ingress     bool
	lossPercent int
}

// nodeAddress is one node of a cluster as a partition names it: kind's
// name of it (what a NetworkChaos selects) and its address on the bed's
// network (what one cuts).
type nodeAddress struct{ name, address string }

// addressedNodes are every cluster's nodes with their addresses, by the
// cluster's name.
func addressedNodes(ctx context.Context) (map[string][]nodeAddress, error) {
	out := map[string][]nodeAddress{}
	for _, c := range infra.Clusters() {
		list, err := infra.ClusterNodes(c)
		if err != nil {
			return nil, err
		}
		for _, n := range list {
			address, _, err := infra.ContainerOnNetwork(ctx, c, n.String())
			if err != nil {
				return nil, err
			}
			out[c.Name] = append(out[c.Name], nodeAddress{name: n.String(), address: address})
		}
	}
	return out, nil
}

// applyChaos makes every node's table (the bed's, table) say exactly what
// the objects ask of it: a node no object selects has none.
func applyChaos(table string, objects []chaosv1alpha1.NetworkChaos) error {
	all, err := infra.Nodes()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(all))
	for _, n := range all {
		names = append(names, n.String())
	}
	tables, err := nodeTables(table, objects, names)
	if err != nil {
		return err
	}
	for _, n := range all {
		if _, err := infra.NodeRun(n, tables[n.String()], "nft", "-f", "-"); err != nil {
			return err
		}
	}
	return nil
}

// nodeTables are the chaos tables of the bed's nodes (names, the nodes
// kind lists now), one per node, that the objects make: every node a table
// (an empty one heals it), each selected node the rules of every object
// that selects it. An object selecting a node the bed does not run now is
// refused, so that no cut is believed made that was not.
func nodeTables(table string, objects []chaosv1alpha1.NetworkChaos, names []string) (map[string]string, error) {
	perNode := map[string][]nftRule{}
	for _, o := range objects {
		selected, rules, err := nftRules(o)
		if err != nil {
			return nil, err
		}
		for _, node := range selected {
			if !slices.Contains(names, node) {
				return nil, fmt.Errorf("NetworkChaos %s selects the node %s, which the bed does not run (its nodes: %s)",
					o.Name, node, strings.Join(names, ", "))
			}
			perNode[node] = append(perNode[node], rules...)
		}
	}
	tables := make(map[string]string, len(names))
	for _, node := range names {
		tables[node] = chaosRules(table, perNode[node])
	}
	return tables, nil
}

// chaosTables reads the bed's chaos tables out of nft's listing of a
// node's tables ("table inet baton-chaos-1a2b3c4"), as nft names them.
func chaosTables(listing string) []string {
	var out []string
	for _, line := range strings.Split(listing, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 3 && fields[0] == "table" && strings.HasPrefix(fields[2], chaosPrefix) {
			out = append(out, fields[1]+" "+fields[2])
		}
	}
	return out
}

// leftoverCuts names the chaos tables on the bed's nodes that no bed of
// this process owns, as "node: table".
func leftoverCuts() ([]string, error) {
	all, err := infra.Nodes()
	if err != nil {
		return nil, err
	}
	var left []string
	for _, n := range all {
		out, err := infra.NodeRun(n, "", "nft", "list", "tables")
		if err != nil {
			return nil, err
		}
		for _, table := range leftoverTables(out, inForce.owns) {
			left = append(left, n.String()+": "+table)
		}
	}
	return left, nil
}

// leftoverTables are the chaos tables of a node's listing that no bed owns.
func leftoverTables(listing string, owns func(table string) bool) []string {
	var left []string
	for _, table := range chaosTables(listing) {
		if !owns(table) {
			left = append(left, table)
		}
	}
	return left
}

// Heal removes every partition from the bed's nodes: every bed's table, a
// crashed run's too.
func Heal(ctx context.Context) error {
	all, err := infra.Nodes()
	if err != nil {
		return err
	}
	for _, n := range all {
		out, err := infra.NodeRun(n, "", "nft", "list", "tables")
		if err != nil {
			return err
		}
		var drop strings.Builder
		for _, table := range chaosTables(out) {
			drop.WriteString(chaosRules(table, nil))
		}
		if drop.Len() == 0 {
			continue
		}
		if _, err := infra.NodeRun(n, drop.String(), "nft", "-f", "-"); err != nil {
			return err
		}
	}
	return nil
}

// leftoverPartitions refuses to run a scenario on nodes a crashed run left
// partitioned, naming them.
func (b *Bed) leftoverPartitions(ctx context.Context) error {
	left, err := leftoverCuts()
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("a partition left over from a crashed run (nft table %s): batonctl realbed heal "+
			"(or make realbed-down) removes it", strings.Join(left, ", "))
	}
	return nil
}

// droppedPackets reads, from every node's copy of the bed's table, how many
// packets each object's rules dropped so far, by the object's name (the
// rules' comment), summed over the nodes it selects: the evidence that a
// partition cut what it names.
func droppedPackets(table string) (map[string]uint64, error) {
	all, err := infra.Nodes()
	if err != nil {
		return nil, err
	}
	family, name, _ := strings.Cut(table, " ")
	dropped := map[string]uint64{}
	for _, n := range all {
		tables, err := infra.NodeRun(n, "", "nft", "list", "tables")
		if err != nil {
			return nil, err
		}
		if !slices.Contains(chaosTables(tables), table) {
			continue
		}
		out, err := infra.NodeRun(n, "", "nft", "list", "table", family, name)
		if err != nil {
			return nil, err
		}
		for name, n := range parseCounters(out) {
			dropped[name] += n
		}
	}
	return dropped, nil
}

// parseCounters reads nft's listing of the chaos table: each rule's
// "counter packets N bytes M ... comment "NAME"", summed by NAME.
func parseCounters(listing string) map[string]uint64 {
	out := map[string]uint64{}
	for _, line := range strings.Split(listing, "\n") {
		fields := strings.Fields(line)
		i := slices.Index(fields, "packets")
		c := slices.Index(fields, "comment")
		if i < 0 || c < 0 || i+1 >= len(fields) || c+1 >= len(fields) {
			continue
		}
		n, err := strconv.ParseUint(fields[i+1], 10, 64)
		if err != nil {
			continue
		}
		out[strings.Trim(strings.Join(fields[c+1:], " "), "\"")] += n
	}
	return out
}
