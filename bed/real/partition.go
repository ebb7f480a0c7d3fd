package real

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// chaosTable is the nftables table the bed's partitions live in, in each
// node container's network namespace: one name, so that a leftover from a
// crashed run is found and removed.
const chaosTable = "inet baton-chaos"

// Cut is one direction of a partition: the node of From drops every packet
// it sends to To's address. A TCP connection needs both directions, so a
// one-way cut stops calls either way; what differs is who times out.
type Cut struct{ From, To Cluster }

// chaosRules renders a node's table for the cuts leaving it: a postrouting
// chain (after the service NAT, so pods' and NodePorts' replies are caught
// as well as the node's own packets) dropping each destination. The first
// two statements make the load idempotent (nft's own idiom): the table is
// made if missing, then deleted, then made whole.
func chaosRules(destinations []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s\ndelete table %s\n", chaosTable, chaosTable)
	if len(destinations) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "table %s {\n\tchain partition {\n\t\ttype filter hook postrouting priority 300; policy accept;\n", chaosTable)
	for _, d := range destinations {
		fmt.Fprintf(&b, "\t\tip daddr %s counter drop\n", d)
	}
	b.WriteString("\t}\n}\n")
	return b.String()
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

// applyCuts makes every node's table say exactly the cuts leaving it.
func applyCuts(cuts []Cut, addresses map[string]string) error {
	for _, c := range Clusters() {
		var destinations []string
		for _, cut := range cuts {
			if cut.From.Name == c.Name {
				destinations = append(destinations, addresses[cut.To.Name])
			}
		}
		slices.Sort(destinations)
		if _, err := nodeRun(c, chaosRules(destinations), "nft", "-f", "-"); err != nil {
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
	return applyCuts(nil, nil)
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
