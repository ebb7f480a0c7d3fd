package drbd

import (
	"maps"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// Cluster is one site's DRBD fabric: every node's resources, the connections
// between them, and the metadata on the nodes' backing volumes.
type Cluster struct {
	opts  Options
	nodes map[string]*node
	names []string // node names, sorted
	conns map[connKey]*connection
	store map[storeKey]*metadata
	mint  uuidMinter
	epoch uint64 // connections established so far; stale resync events compare it
	stats Stats
}

// Stats counts what the fabric moved, for reports and tests.
type Stats struct {
	// ResyncedBytes are the bytes resync copied from a SyncSource to a SyncTarget.
	ResyncedBytes uint64
	// ResyncIdenticalBytes are those of ResyncedBytes the target held
	// already: csums-alg found them equal, nothing was sent or written.
	ResyncIdenticalBytes uint64
	// ReplicatedBytes are the bytes protocol C wrote to peers' backing volumes.
	ReplicatedBytes uint64
	// Resyncs are the resyncs started, bitmap or full.
	Resyncs int
}

type node struct {
	name  string
	open  Opener
	alive bool
	up    map[string]*replica // by resource name
}

// replica is a resource's runtime state on one node, from Up to Down or crash.
type replica struct {
	node        string
	config      backend.ResourceConfig
	self        backend.ResourceNode
	role        backend.Role
	backing     backend.Device // nil when diskless
	md          *metadata      // nil when diskless
	usableBytes uint64         // the DRBD device's size: the volume minus the metadata
	opens       int
	// standAlone[peer]: this node gave up on the peer (split brain, unrelated
	// data) and does not try again until the resource is brought down and up.
	standAlone map[string]bool
	// tl[peer] holds the blocks sent to the peer since the last flush, which the
	// peer may not have on stable storage yet (DRBD's transfer log).
	tl map[string]*blockSet
	// peerOutdated[peer]: the peer's disk was Outdated or Inconsistent when the
	// connection ended, so it cannot have been promoted behind this node's back.
	// It lives in memory only, as DRBD 8.4's peer disk state does.
	peerOutdated map[string]bool
	quorum       bool
	down         bool // gone (Down or crash): its device handles fail
	// peerNodes and diskfulPeerNodes are the other nodes of config, sorted:
	// config never changes while the replica is up, and every block of I/O
	// asks for them.
	peerNodes, diskfulPeerNodes []string
	// attaching: the disk is negotiating its first handshake after an attach
	// (DRBD's D_NEGOTIATING, below Consistent).
	attaching bool
	// fenced: the read-only flag on the device (FenceDevice, BLKROSET on
	// /dev/drbdN). It belongs to the device, not the role: it outlives a
	// demotion and a promotion, and goes with Down or a crash.
	fenced bool
}

type storeKey struct{ node, volume string }

// connKey names a connection; a < b.
type connKey struct{ resource, a, b string }

func keyOf(resource, x, y string) connKey {
	if y < x {
		x, y = y, x
	}
	return connKey{resource: resource, a: x, b: y}
}

// connection is an established link between two replicas; its absence from
// Cluster.conns means the two are not Connected.
type connection struct {
	epoch uint64
	sync  *resyncState // nil when no resync runs
}

// New builds a Cluster. Every node starts alive with nothing up.
func New(opts Options) (*Cluster, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	c := &Cluster{opts: opts, nodes: map[string]*node{}, conns: map[connKey]*connection{},
		store: map[storeKey]*metadata{}, mint: newMinter(opts.Site)}
	for _, n := range opts.Nodes {
		c.nodes[n.Name] = &node{name: n.Name, open: n.Open, alive: true, up: map[string]*replica{}}
		c.names = append(c.names, n.Name)
	}
	slices.Sort(c.names)
	c.logf("site %s: nodes %v, resync %d B/s in %d B chunks, quorum %t, fencing %s",
		opts.Site, c.names, opts.ResyncBytesPerSecond, opts.ResyncChunkBytes, opts.Quorum, opts.Fencing)
	return c, nil
}

// Node is the Replicator of one node. An unknown name is a programming error.
func (c *Cluster) Node(name string) backend.Replicator {
	if _, ok := c.nodes[name]; !ok {
		panic("drbd: unknown node " + name)
	}
	return &nodeView{c: c, name: name}
}

// Stats reports what the fabric moved so far.
func (c *Cluster) Stats() Stats { return c.stats }

// Observe re-derives every connection from Links: lost links drop their
// connections, restored ones connect and resync. The world calls it after it
// changes the network; every Replicator call and device I/O observes too.
func (c *Cluster) Observe() {
	for _, resource := range c.resources() {
		c.observe(resource)
	}
	c.checkInvariants()
}

// Crash takes a node down uncleanly: every resource on it goes down without a
// flush or a goodbye. Metadata and the backing volumes stay.
func (c *Cluster) Crash(name string) {
	n := c.mustNode(name)
	if !n.alive {
		return
	}
	c.logf("%s: crash", name)
	resources := slices.Sorted(maps.Keys(n.up))
	for _, resource := range resources {
		c.crashReplica(n.up[resource])
	}
	n.alive = false
	clear(n.up)
	for _, resource := range resources {
		c.observe(resource)
	}
	c.checkInvariants()
}

func (c *Cluster) crashReplica(r *replica) {
	r.down = true // from now on it does nothing: not even on the lost connections
	if r.md != nil {
		r.md.crashed = true
		hot := r.md.al.blocks(r.usableBytes)
		for _, peer := range r.diskfulPeers() {
			r.md.bitmapFor(peer).union(&r.md.unsynced)
			r.md.bitmapFor(peer).union(hot)
		}
		r.md.unsynced.reset()
		r.md.al.clear()
	}
	for _, peer := range r.peers() {
		if _, ok := c.conns[keyOf(r.config.Name, r.node, peer)]; ok {
			c.disconnect(keyOf(r.config.Name, r.node, peer), false)
		}
	}
}

// Restart brings a crashed node back with no resource up, as after a reboot
// before the node agent runs.
func (c *Cluster) Restart(name string) {
	n := c.mustNode(name)
	if n.alive {
		return
	}
	n.alive = true
	c.logf("%s: restart", name)
}

func (c *Cluster) mustNode(name string) *node {
	n, ok := c.nodes[name]
	if !ok {
		panic("drbd: unknown node " + name)
	}
	return n
}

func (c *Cluster) logf(format string, args ...any) {
	c.opts.Scheduler.Logf("drbd", format, args...)
}

// resources lists the names of every resource up anywhere, sorted.
func (c *Cluster) resources() []string {
	var out []string
	for _, name := range c.names {
		for resource := range c.nodes[name].up {
			if !slices.Contains(out, resource) {
				out = append(out, resource)
			}
		}
	}
	slices.Sort(out)
	return out
}

// replicaOf is the resource's replica on a node, nil when the node is down or
// the resource is not up there.
func (c *Cluster) replicaOf(resource, name string) *replica {
	n, ok := c.nodes[name]
	if !ok || !n.alive {
		return nil
	}
	return n.up[resource]
}

// upReplicas lists the resource's replicas, by node name.
func (c *Cluster) upReplicas(resource string) []*replica {
	return c.appendUpReplicas(nil, resource)
}

// appendUpReplicas appends the resource's replicas to out, by node name: a
// caller on the I/O path passes a buffer on its stack.
func (c *Cluster) appendUpReplicas(out []*replica, resource string) []*replica {
	for _, name := range c.names {
		if r := c.replicaOf(resource, name); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// connectedPeers lists the replicas r is Connected to, by node name.
func (c *Cluster) connectedPeers(r *replica) []*replica {
	var out []*replica
	for _, peer := range r.peers() {
		if _, ok := c.conns[keyOf(r.config.Name, r.node, peer)]; ok {
			out = append(out, c.replicaOf(r.config.Name, peer))
		}
	}
	return out
}

func (c *Cluster) connected(r *replica, peer string) bool {
	_, ok := c.conns[keyOf(r.config.Name, r.node, peer)]
	return ok
}

// peers lists the other nodes of the replica's configuration, sorted. The
// slice is shared: callers read it only.
func (r *replica) peers() []string { return r.peerNodes }

// diskfulPeers lists the peers that hold a copy of the data, sorted; shared as
// peers is.
func (r *replica) diskfulPeers() []string { return r.diskfulPeerNodes }

// otherNodes lists config's nodes other than node, sorted; with diskfulOnly,
// only those with a backing volume.
func otherNodes(config backend.ResourceConfig, node string, diskfulOnly bool) []string {
	var out []string
	for _, n := range config.Nodes {
		if n.Node != node && (!diskfulOnly || n.Volume != "") {
			out = append(out, n.Node)
		}
	}
	slices.Sort(out)
	return out
}

func (r *replica) disk() backend.DiskState {
	if r.md == nil {
		return backend.Diskless
	}
	return r.md.sb.disk
}

func (r *replica) tlFor(peer string) *blockSet { return blockSetOf(r.tl, peer) }
