package drbd

import (
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// maxNodeID is DRBD's highest node-id.
const maxNodeID = 15

// checkConfig validates a resource configuration for a node and returns the
// node's own entry. drbdadm refuses such configurations before it touches the
// kernel.
func checkConfig(config backend.ResourceConfig, name string) (backend.ResourceNode, error) {
	if config.Name == "" {
		return backend.ResourceNode{}, backend.Refusal(backend.ErrInvalid, "drbdadm", "resource without a name")
	}
	var names []string
	var ids []uint8
	for _, n := range config.Nodes {
		switch {
		case n.Node == "":
			return backend.ResourceNode{}, invalidConfig(config, "a node without a name")
		case slices.Contains(names, n.Node):
			return backend.ResourceNode{}, invalidConfig(config, fmt.Sprintf("node %s twice", n.Node))
		case n.NodeID > maxNodeID:
			return backend.ResourceNode{}, invalidConfig(config, fmt.Sprintf("node-id %d of %s out of range 0..%d", n.NodeID, n.Node, maxNodeID))
		case slices.Contains(ids, n.NodeID):
			return backend.ResourceNode{}, invalidConfig(config, fmt.Sprintf("node-id %d twice", n.NodeID))
		}
		names = append(names, n.Node)
		ids = append(ids, n.NodeID)
	}
	self, ok := entryOf(config, name)
	if !ok {
		return backend.ResourceNode{}, backend.Refusal(backend.ErrInvalid, "drbdadm",
			"'%s' not defined in your config (for this host).", config.Name)
	}
	return self, nil
}

func invalidConfig(config backend.ResourceConfig, why string) error {
	return backend.Refusal(backend.ErrInvalid, "drbdadm", "%s: invalid configuration: %s", config.Name, why)
}

// sameConfig: Up on an up resource is a no-op only for the configuration it
// runs with.
func sameConfig(a, b backend.ResourceConfig) bool {
	return a.Name == b.Name && a.Minor == b.Minor && a.Port == b.Port && slices.Equal(a.Nodes, b.Nodes)
}

func copyConfig(config backend.ResourceConfig) backend.ResourceConfig {
	config.Nodes = slices.Clone(config.Nodes)
	return config
}

// changedConfig explains, in DRBD's words, why a live resource does not take a
// different configuration: the port and minor of a running resource are never
// changed behind its peers' backs.
func changedConfig(running, asked backend.ResourceConfig, self backend.ResourceNode, runningSelf backend.ResourceNode) error {
	object := fmt.Sprint(running.Minor)
	switch {
	case running.Minor != asked.Minor:
		return backend.Refusal(backend.ErrRefused, "drbdsetup",
			"%d: Failure: (%d) %s (running minor %d, asked %d)", asked.Minor, int(errMinorOrVolumeUsed), errMinorOrVolumeUsed, running.Minor, asked.Minor)
	case running.Port != asked.Port:
		return backend.Refusal(backend.ErrRefused, "drbdsetup",
			"%s: Failure: (%d) %s (running port %d, asked %d)", running.Name, int(errNetConfigured), errNetConfigured, running.Port, asked.Port)
	case runningSelf.Volume != self.Volume:
		return failure(backend.ErrRefused, object, errDiskConfigured)
	}
	return failure(backend.ErrRefused, running.Name, errNetConfigured)
}
