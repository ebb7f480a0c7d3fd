package drbd

import (
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// liveStatus reads the resource's state from the kernel: DRBD 8.4's
// `drbdsetup status`, or DRBD 9's `drbdsetup events2 --now`, whose lines
// name every object they describe (resource, device, connection by
// peer-node-id) rather than leaving it to indentation. events2 ends its
// initial state with "exists -" and prints nothing before it for a resource
// DRBD does not run.
func (r *Replicator) liveStatus(resource string) (liveStatus, error) {
	if r.version != V9 {
		out, err := r.output(nil, "drbdsetup", "status", resource, "--verbose", "--statistics", "--color=never")
		if err != nil {
			return liveStatus{}, err
		}
		return parseStatus(out)
	}
	out, err := r.output(nil, "drbdsetup", "events2", "--now", "--statistics", resource)
	if err != nil {
		return liveStatus{}, err
	}
	live, err := parseEvents2(out)
	if errors.Is(err, errNoResourceEvents) {
		return liveStatus{}, noSuchResource(resource)
	}
	if err != nil {
		return liveStatus{}, err
	}
	if live.name != resource {
		return liveStatus{}, fmt.Errorf("drbdsetup events2 %s printed the state of %s", resource, live.name)
	}
	return live, nil
}

// show9 reports what DRBD 9's kernel runs. Unlike 8.4's, it knows the
// node-ids and each connection's name (the peer's "on" section); the peers'
// volumes it cannot know come from the resource file. With no connection the
// kernel holds no address of this node: the resource file's stands in, so
// that adoption still finds the port the resource was brought up with.
func (r *Replicator) show9(resource string, live liveConfig) backend.ResourceConfig {
	named := r.configuredNodes(resource)
	config := backend.ResourceConfig{Name: resource, Minor: live.minor, Port: live.local.port}
	self := backend.ResourceNode{Node: r.options.Node, NodeID: live.nodeID, Address: live.local.hostPort()}
	if live.disk != "" {
		self.Volume = path.Base(live.disk)
	}
	if live.local == (address{}) {
		self.Address, config.Port = "", 0
		for _, n := range named {
			if n.Node == self.Node {
				a, _ := splitAddress(n.Address) // parseDump has read it
				self.Address, config.Port = n.Address, a.port
			}
		}
	}
	config.Nodes = append(config.Nodes, self)
	for i, p := range live.peers {
		peer := backend.ResourceNode{Node: p.name, NodeID: p.nodeID}
		if a := live.peerAddresses[i]; a != (address{}) {
			peer.Address = a.hostPort()
		}
		for _, n := range named {
			if n.NodeID == p.nodeID && (p.name == "" || n.Node == p.name) {
				peer.Node, peer.Volume = n.Node, n.Volume
			}
		}
		if peer.Node == "" { // a peer neither the kernel nor the file names
			peer.Node = peer.Address
		}
		if peer.Node == "" {
			peer.Node = fmt.Sprintf("node-id-%d", p.nodeID)
		}
		config.Nodes = append(config.Nodes, peer)
	}
	slices.SortFunc(config.Nodes, func(a, b backend.ResourceNode) int { return int(a.NodeID) - int(b.NodeID) })
	return config
}
