package infra

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	kindexec "sigs.k8s.io/kind/pkg/exec"
)

// ClusterNodes are kind's handles on every node of the cluster, by name:
// commands run in their namespaces through the node provider, as kind's
// own actions run. A btrfs site and the hub have one node; a zfs-drbd
// site three (StorageMode.kindNodes).
func ClusterNodes(c Cluster) ([]nodes.Node, error) {
	list, err := provider(io.Discard).ListNodes(c.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: its nodes: %w", c.Name, err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%s: no node (is the bed up? make realbed)", c.Name)
	}
	slices.SortFunc(list, func(x, y nodes.Node) int { return strings.Compare(x.String(), y.String()) })
	return list, nil
}

// Nodes are the nodes of every cluster of the bed, the hub's first.
func Nodes() ([]nodes.Node, error) {
	var all []nodes.Node
	for _, c := range Clusters() {
		list, err := ClusterNodes(c)
		if err != nil {
			return nil, err
		}
		all = append(all, list...)
	}
	return all, nil
}

// NodeRun runs a command in the node with stdin, returning its output;
// kind's RunError carries the command and its output.
func NodeRun(n nodes.Node, stdin string, name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := n.Command(name, args...).SetStdin(strings.NewReader(stdin)).SetStdout(&out).SetStderr(&out)
	if err := cmd.Run(); err != nil {
		if run, ok := err.(*kindexec.RunError); ok {
			return out.String(), fmt.Errorf("%s: %s: %w: %s", n, strings.Join(run.Command, " "), err, strings.TrimSpace(out.String()))
		}
		return out.String(), fmt.Errorf("%s: %s: %w", n, name, err)
	}
	return out.String(), nil
}

// NodeContainer reads the cluster's control-plane container's address on
// the bed's network and the host PID of its init process.
func NodeContainer(ctx context.Context, c Cluster) (ip string, pid int, err error) {
	return ContainerOnNetwork(ctx, c, c.Node())
}

// ContainerOnNetwork reads the address on the bed's network and the host
// PID of the init process of the cluster's node container named node.
func ContainerOnNetwork(ctx context.Context, c Cluster, node string) (ip string, pid int, err error) {
	out, err := docker(ctx, "inspect", "--format", "{{.State.Pid}} {{(index .NetworkSettings.Networks \""+KindNetwork+"\").IPAddress}}", node)
	if err != nil {
		return "", 0, fmt.Errorf("%s: its node container %s: %w", c.Name, node, err)
	}
	fields := strings.Fields(out)
	if len(fields) != 2 {
		return "", 0, fmt.Errorf("%s: its node container %s is not on the network %s (%q)", c.Name, node, KindNetwork, out)
	}
	if pid, err = strconv.Atoi(fields[0]); err != nil || pid <= 0 {
		return "", 0, fmt.Errorf("%s: its node container %s is not running (pid %q)", c.Name, node, fields[0])
	}
	return fields[1], pid, nil
}
