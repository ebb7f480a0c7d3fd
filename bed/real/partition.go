package real

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// chaosTable is the nftables table the bed's partitions live in, in each
// node container's network namespace: one name, so that a leftover from a
// crashed run is found and removed.
const chaosTable = "inet baton-chaos"

// A fault is described as chaos-mesh describes it -- a NetworkChaos
// object (chaos.go) -- and injected here: each object selects one node of
// the bed (selector.nodes) and names the addresses it cuts
// (externalTargets); the node's table holds one rule per object and
// target: an egress chain (postrouting, after the service NAT, so pods'
// packets and NodePorts' replies are caught as well as the node's own)
// for direction to, an ingress chain (prerouting, before conntrack's NAT)
// for from, both for both. A partition drops; a loss drops its share
// (nft's numgen). The first two statements make the load idempotent
// (nft's own idiom): the table made if missing, deleted, then made whole.
func chaosRules(rules []nftRule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s\ndelete table %s\n", chaosTable, chaosTable)
	if len(rules) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "table %s {\n", chaosTable)
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

// node is kind's handle on the cluster's one node: commands run in its
// namespaces through the node provider, as kind's own actions run.
func node(c Cluster) (nodes.Node, error) {
	list, err := provider(io.Discard).ListNodes(c.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: its nodes: %w", c.Name, err)
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("%s: %d nodes, the bed's clusters have one", c.Name, len(list))
	}
	return list[0], nil
}

// nodeRun runs a command in the cluster's node with stdin, returning its
// output; kind's RunError carries the command and its output.
func nodeRun(c Cluster, stdin string, name string, args ...string) (string, error) {
	n, err := node(c)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	cmd := n.Command(name, args...).SetStdin(strings.NewReader(stdin)).SetStdout(&out).SetStderr(&out)
	if err := cmd.Run(); err != nil {
		if run, ok := err.(*kindexec.RunError); ok {
			return out.String(), fmt.Errorf("%s: %s: %w: %s", c.Name, strings.Join(run.Command, " "), err, strings.TrimSpace(out.String()))
		}
		return out.String(), fmt.Errorf("%s: %s: %w", c.Name, name, err)
	}
	return out.String(), nil
}

// applyChaos makes every node's table say exactly what the objects ask
// of it.
func applyChaos(objects []chaosv1alpha1.NetworkChaos) error {
	perNode := map[string][]nftRule{}
	for _, o := range objects {
		node, rules, err := nftRules(o)
		if err != nil {
			return err
		}
		perNode[node] = append(perNode[node], rules...)
	}
	for _, c := range Clusters() {
		if _, err := nodeRun(c, chaosRules(perNode[c.Node()]), "nft", "-f", "-"); err != nil {
			return err
		}
	}
	return nil
}

// leftoverCuts names the nodes that hold the bed's chaos table now.
func leftoverCuts() ([]string, error) {
	var left []string
	for _, c := range Clusters() {
		out, err := nodeRun(c, "", "nft", "list", "tables")
		if err != nil {
			return nil, err
		}
		if strings.Contains(out, "table "+chaosTable) {
			left = append(left, c.Node())
		}
	}
	return left, nil
}

// Heal removes every partition from the bed's nodes: a crashed run's too.
func (in *Infra) Heal(ctx context.Context) error {
	return applyChaos(nil)
}

// leftoverPartitions refuses to run a scenario on nodes a crashed run left
// partitioned, naming them.
func (b *Bed) leftoverPartitions(ctx context.Context) error {
	left, err := leftoverCuts()
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("a partition left over from a crashed run (nft table %s) in %s: batonctl realbed heal "+
			"(or make realbed-down) removes it", chaosTable, strings.Join(left, ", "))
	}
	return nil
}

// droppedPackets reads, from every node's table, how many packets each
// object's rules dropped so far, by the object's name (the rules'
// comment): the evidence that a partition cut what it names.
func droppedPackets() (map[string]uint64, error) {
	dropped := map[string]uint64{}
	for _, c := range Clusters() {
		tables, err := nodeRun(c, "", "nft", "list", "tables")
		if err != nil {
			return nil, err
		}
		if !strings.Contains(tables, "table "+chaosTable) {
			continue
		}
		out, err := nodeRun(c, "", "nft", "list", "table", "inet", "baton-chaos")
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
