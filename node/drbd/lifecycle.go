package drbd

import (
	"fmt"
	"path"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// Up writes the resource file and brings the resource up (`drbdadm up`:
// attach the volume, connect to the peers). On a resource that is up already
// it changes nothing: the same configuration is success, a different one
// (port, minor, disk, peers) is ErrRefused -- a live resource never moves
// behind its peers' backs -- and one whose disk DRBD detached gets it back
// (attach). An up that fails halfway is taken down again, so that no
// half-configured resource passes for a running one.
func (r *Replicator) Up(config backend.ResourceConfig) error {
	config, self, err := r.ownConfig(config)
	if err != nil {
		return err
	}
	live, up, err := r.live(config.Name)
	if err != nil {
		return err
	}
	if up {
		if err := r.sameAsLive(config, self, live); err != nil {
			return err
		}
		if live.disk == "" && self.Volume != "" {
			return r.attach(config)
		}
		return nil
	}
	if err := r.writeConfig(config); err != nil {
		return err
	}
	if _, err := r.drbdadm(nil, "up", config.Name); err != nil {
		if _, up, _ := r.live(config.Name); up {
			_ = r.run("drbdsetup", "down", config.Name)
		}
		return err
	}
	return nil
}

// attach gives a running resource its disk back. DRBD detaches a disk that
// failed a write (on-io-error detach, its default: a full pool, a read-only
// zvol) and keeps the replica Diskless for good -- no reconnect attaches it
// again -- while its peers' bitmaps collect what it misses. The agent's next
// pass attaches it; the metadata it finds says what to resync. While the
// pool still refuses writes the attach itself fails (drbdmeta cannot write
// the activity log) and the pass after retries.
func (r *Replicator) attach(config backend.ResourceConfig) error {
	if err := r.writeConfig(config); err != nil {
		return err
	}
	_, err := r.drbdadm(nil, "attach", config.Name)
	return err
}

// sameAsLive refuses a configuration the running resource does not match, in
// the words drbdsetup would use had baton asked it to apply the change.
func (r *Replicator) sameAsLive(config backend.ResourceConfig, self backend.ResourceNode, live liveConfig) error {
	want, _ := splitAddress(self.Address)
	disk := ""
	if self.Volume != "" {
		disk = r.options.Backing(self.Volume)
	}
	var peers, livePeers []string
	for _, n := range config.Nodes {
		if n.Node != self.Node {
			a, _ := splitAddress(n.Address)
			peers = append(peers, r.describePeer(n.NodeID, a))
		}
	}
	for i, a := range live.peerAddresses {
		var nodeID uint8
		if i < len(live.peers) {
			nodeID = live.peers[i].nodeID
		}
		livePeers = append(livePeers, r.describePeer(nodeID, a))
	}
	slices.Sort(peers)
	slices.Sort(livePeers)
	switch {
	case live.minor != config.Minor:
		return backend.Refusal(backend.ErrRefused, "drbdsetup",
			"%d: Failure: (161) Minor or volume exists already (delete it first) (running minor %d, asked %d)",
			config.Minor, live.minor, config.Minor)
	case r.version == V9 && live.nodeID != self.NodeID:
		return backend.Refusal(backend.ErrRefused, "drbdsetup",
			"%s: node-id %d is running, %d asked: DRBD 9 takes a node-id only while the resource is down",
			config.Name, live.nodeID, self.NodeID)
	case live.local != want && !(r.version == V9 && live.local == address{}):
		// DRBD 9 keeps the node's address in its paths: with no path the
		// kernel holds no address to differ from, and the peers decide.
		return backend.Refusal(backend.ErrRefused, "drbdsetup",
			"%s: Failure: (125) Device has a net-config (use disconnect first) (running %s, asked %s)",
			config.Name, live.local, want)
	case live.disk != "" && live.disk != disk:
		return backend.Refusal(backend.ErrRefused, "drbdsetup",
			"%d: Failure: (124) Device is attached to a disk (use detach first) (running %q, asked %q)",
			live.minor, live.disk, disk)
	case !slices.Equal(peers, livePeers):
		return backend.Refusal(backend.ErrRefused, "drbdsetup",
			"%s: Failure: (125) Device has a net-config (use disconnect first) (running peers %v, asked %v)",
			config.Name, livePeers, peers)
	}
	return nil
}

// describePeer is a peer as sameAsLive compares it: its address, and on
// DRBD 9, whose kernel knows them, its node-id.
func (r *Replicator) describePeer(nodeID uint8, a address) string {
	if r.version == V9 {
		return fmt.Sprintf("node-id %d %s", nodeID, a)
	}
	return a.String()
}

// configuredNodes reads the nodes of a resource from its file as drbdadm
// understands it (`drbdadm dump`); nil when there is no file to read.
func (r *Replicator) configuredNodes(resource string) []backend.ResourceNode {
	out, err := r.drbdadm(nil, "dump", resource)
	if err != nil {
		return nil
	}
	nodes, err := parseDump(string(out))
	if err != nil {
		return nil
	}
	return nodes
}

// Show reports the configuration the kernel runs: minor, port and addresses
// from `drbdsetup show`, node names from the resource file (DRBD 8.4's kernel
// knows addresses, not names); in the core's name and minor.
func (r *Replicator) Show(resource string) (backend.ResourceConfig, error) {
	name, err := r.kernelName(resource)
	if err != nil {
		return backend.ResourceConfig{}, err
	}
	config, err := r.show(name)
	if err != nil {
		return backend.ResourceConfig{}, err
	}
	config.Name = resource
	config.Minor, err = r.coreMinor(name, config.Minor)
	return config, err
}

// show is Show in the kernel's names.
func (r *Replicator) show(resource string) (backend.ResourceConfig, error) {
	live, up, err := r.live(resource)
	if err != nil {
		return backend.ResourceConfig{}, err
	}
	if !up {
		return backend.ResourceConfig{}, noSuchResource(resource)
	}
	if r.version == V9 {
		return r.show9(resource, live), nil
	}
	config := backend.ResourceConfig{Name: resource, Minor: live.minor, Port: live.local.port}
	selfVolume := ""
	if live.disk != "" {
		selfVolume = path.Base(live.disk)
	}
	config.Nodes = append(config.Nodes, backend.ResourceNode{Node: r.options.Node, Address: live.local.hostPort(), Volume: selfVolume})
	named := r.configuredNodes(resource)
	for _, a := range live.peerAddresses {
		peer := backend.ResourceNode{Node: a.hostPort(), Address: a.hostPort()}
		for _, n := range named {
			if n.Address == a.hostPort() {
				peer.Node, peer.Volume = n.Node, n.Volume
			}
		}
		config.Nodes = append(config.Nodes, peer)
	}
	for i := range config.Nodes {
		for _, n := range named {
			if n.Node == config.Nodes[i].Node {
				config.Nodes[i].NodeID = n.NodeID
			}
		}
	}
	slices.SortFunc(config.Nodes, func(a, b backend.ResourceNode) int { return int(a.NodeID) - int(b.NodeID) })
	return config, nil
}

// Status reports the resource's state on this node (DRBD 8.4: `drbdsetup
// status --verbose --statistics`; DRBD 9: `drbdsetup events2 --now
// --statistics`), its peers named from the resource file.
func (r *Replicator) Status(resource string) (backend.ResourceStatus, error) {
	if !safeName.MatchString(resource) {
		return backend.ResourceStatus{}, noSuchResource(resource)
	}
	core := resource
	resource, err := r.kernelName(resource)
	if err != nil {
		return backend.ResourceStatus{}, err
	}
	live, err := r.liveStatus(resource)
	if err != nil {
		return backend.ResourceStatus{}, err
	}
	var peers []backend.ResourceNode
	if nodes := r.configuredNodes(resource); nodes != nil {
		peers = []backend.ResourceNode{}
		for _, n := range nodes {
			if n.Node != r.options.Node {
				peers = append(peers, n)
			}
		}
	}
	status := resourceStatus(live, peers, r.version)
	if r.options.SharedKernel.Suffix != "" {
		status.Name = core // the kernel's name carries this node's suffix
	}
	return status, nil
}
