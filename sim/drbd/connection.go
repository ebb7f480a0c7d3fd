package drbd

import (
	"github.com/baton-dr/baton/storage/backend"
)

// observe brings the resource's connections in line with Links and the
// replicas' states: first every connection that no longer holds drops, then
// every pair that can connect does, in node-name order.
func (c *Cluster) observe(resource string) {
	var buf [8]*replica // every block of I/O observes: no heap for a few replicas
	ups := c.appendUpReplicas(buf[:0], resource)
	for i, a := range ups {
		for _, b := range ups[i+1:] {
			if _, ok := c.conns[keyOf(resource, a.node, b.node)]; ok && !c.canConnect(a, b) {
				c.disconnect(keyOf(resource, a.node, b.node), false)
			}
		}
	}
	for i, a := range ups {
		for _, b := range ups[i+1:] {
			if _, ok := c.conns[keyOf(resource, a.node, b.node)]; !ok && c.canConnect(a, b) {
				c.connect(a, b)
			}
		}
	}
	c.outdateWeak(ups)
	c.reconcile(ups)
	c.updateQuorum(resource, ups)
}

// reconcile re-handshakes connections whose two sides hold different
// generations once no Primary feeds either of them: a node outdated as weak
// catches up from a peer that saw the Primary's writes, as DRBD 9's
// reconciliation resync does after the Primary is lost.
func (c *Cluster) reconcile(ups []*replica) {
	for i, a := range ups {
		for _, b := range ups[i+1:] {
			conn, ok := c.conns[keyOf(a.config.Name, a.node, b.node)]
			if !ok || conn.sync != nil || a.md == nil || b.md == nil || a.md.sb.current == b.md.sb.current {
				continue
			}
			if c.fedByPrimary(a) || c.fedByPrimary(b) {
				continue
			}
			c.logf("%s %s-%s: reconciliation: generations differ", a.config.Name, a.node, b.node)
			c.rehandshake(a, b)
		}
	}
}

// fedByPrimary: r is Primary or Connected to one.
func (c *Cluster) fedByPrimary(r *replica) bool {
	if r.role == backend.Primary {
		return true
	}
	for _, p := range c.connectedPeers(r) {
		if p.role == backend.Primary {
			return true
		}
	}
	return false
}

// component is every replica r reaches through Connected links, r included,
// by node name: DRBD 9 runs role changes as a two-phase commit across it.
func (c *Cluster) component(r *replica) []*replica {
	seen := map[string]bool{r.node: true}
	queue := []*replica{r}
	for i := 0; i < len(queue); i++ { // bounded: each node enters the queue once
		for _, p := range c.connectedPeers(queue[i]) {
			if !seen[p.node] {
				seen[p.node] = true
				queue = append(queue, p)
			}
		}
	}
	var out []*replica
	for _, x := range c.upReplicas(r.config.Name) {
		if seen[x.node] {
			out = append(out, x)
		}
	}
	return out
}

// outdateWeak applies DRBD 9's rule for a Secondary that cannot see a Primary
// which its own peers see: it is missing the Primary's writes for sure, so it
// is Outdated. (A node that sees nobody cannot tell a partition from a crash
// and stays UpToDate; fencing decides what it may do.)
func (c *Cluster) outdateWeak(ups []*replica) {
	for _, r := range ups {
		if r.md == nil || r.role == backend.Primary || r.md.sb.disk != backend.UpToDate {
			continue
		}
		if via, primary, weak := c.weakness(r, ups); weak {
			c.logf("%s %s: weak: %s reaches Primary %s, this node does not", r.config.Name, r.node, via, primary)
			c.setDisk(r, backend.Outdated)
		}
	}
}

// weakness finds a Connected peer of r that reaches a Primary r does not.
func (c *Cluster) weakness(r *replica, ups []*replica) (via, primary string, weak bool) {
	for _, p := range ups {
		if p.role != backend.Primary || c.connected(r, p.node) {
			continue
		}
		for _, q := range c.connectedPeers(r) {
			if c.connected(q, p.node) {
				return q.node, p.node, true
			}
		}
	}
	return "", "", false
}

// canConnect: both want the connection, agree on it, and reach each other.
func (c *Cluster) canConnect(a, b *replica) bool {
	if a.standAlone[b.node] || b.standAlone[a.node] {
		return false
	}
	if a.config.Port != b.config.Port {
		return false
	}
	entryA, okA := entryOf(b.config, a.node)
	entryB, okB := entryOf(a.config, b.node)
	if !okA || !okB || entryA != a.self || entryB != b.self {
		return false
	}
	return c.opts.Links.Reachable(a.node, b.node) && c.opts.Links.Reachable(b.node, a.node)
}

func entryOf(config backend.ResourceConfig, name string) (backend.ResourceNode, bool) {
	for _, n := range config.Nodes {
		if n.Node == name {
			return n, true
		}
	}
	return backend.ResourceNode{}, false
}

// connect runs the handshake of two replicas (a before b by name) and acts on
// its verdict.
func (c *Cluster) connect(a, b *replica) {
	resource := a.config.Name
	bothPrimary := a.role == backend.Primary && b.role == backend.Primary
	if a.md == nil || b.md == nil {
		switch {
		case bothPrimary:
			c.refuse(a, b, "Both sides are Primary (Multiple primaries not allowed by config)")
		case c.exposesOneGeneration(a, b) && c.exposesOneGeneration(b, a):
			c.establish(a, b)
		}
		return
	}
	v := decide(c.sideOf(a, b), c.sideOf(b, a))
	source, target := a, b
	if !v.sourceIsA {
		source, target = b, a
	}
	switch v.outcome {
	case inSync:
		if bothPrimary {
			c.refuse(a, b, "Both sides are Primary (Multiple primaries not allowed by config)")
			return
		}
		c.establish(a, b)
		c.settleInSync(a, b)
	case resync, fullSync:
		c.connectForResync(source, target, v.outcome == fullSync)
	case sourceInconsistent:
		if c.syncTargetOf(source) != nil {
			return // the source is still being synced itself; try again once it is done
		}
		c.refuse(a, b, "I shall become SyncSource, but I am inconsistent!")
	case targetPrimary:
		c.refuse(a, b, "I shall become SyncTarget, but I am primary!")
	case splitBrain:
		c.refuse(a, b, "Split-Brain detected but unresolved, dropping connection!")
	case unrelated:
		c.refuse(a, b, "Unrelated data, aborting!")
	default:
		panic("drbd: handshake outcome " + v.outcome.String() + " unhandled for " + resource)
	}
}

// exposesOneGeneration: a diskless replica reaches its data through its
// diskful peers, so it connects to one only when that peer holds the same
// generation as the diskful peers it is connected to already.
func (c *Cluster) exposesOneGeneration(diskless, diskful *replica) bool {
	if diskless.md != nil || diskful.md == nil {
		return true
	}
	for _, p := range c.connectedPeers(diskless) {
		if p.md != nil && p.md.sb.current != diskful.md.sb.current {
			return false
		}
	}
	return true
}

// connectForResync starts a resync, or, when the target is already being
// synced from a third node, joins that resync when it brings the same
// generation and otherwise waits for it to end (DRBD pauses such a resync).
func (c *Cluster) connectForResync(source, target *replica, full bool) {
	running := c.syncTargetOf(target)
	if running == nil {
		c.establish(source, target)
		c.startResync(source, target, full)
		return
	}
	if full || source.md.sb.current != target.md.sb.current {
		return
	}
	c.establish(source, target)
	from := c.replicaOf(target.config.Name, running.source)
	blocks := source.md.bitmapFor(target.node).clone()
	blocks.union(target.md.bitmapFor(source.node))
	from.md.bitmapFor(target.node).union(blocks)
	target.md.bitmapFor(from.node).union(blocks)
	source.md.bitmapFor(target.node).reset()
	target.md.bitmapFor(source.node).reset()
}

// sideOf is what r brings to a handshake with peer.
func (c *Cluster) sideOf(r, peer *replica) side {
	return side{
		current:     r.md.sb.current,
		bitmapUUID:  r.md.bitmapUUID[peer.node],
		ancestors:   r.md.ancestors(),
		disk:        r.md.sb.disk,
		dirty:       r.md.bitmapFor(peer.node).count > 0,
		crashed:     r.md.crashed,
		primary:     r.role == backend.Primary,
		negotiating: r.attaching,
	}
}

func (c *Cluster) establish(a, b *replica) {
	c.epoch++
	c.conns[keyOf(a.config.Name, a.node, b.node)] = &connection{epoch: c.epoch}
	c.logf("%s %s-%s: conn( Connecting -> Connected )", a.config.Name, a.node, b.node)
}

// settleInSync applies what an in-sync handshake implies: an Outdated side of
// the same generation as an UpToDate one is UpToDate again, and the crash
// marks are answered.
func (c *Cluster) settleInSync(a, b *replica) {
	for _, pair := range [][2]*replica{{a, b}, {b, a}} {
		x, y := pair[0], pair[1]
		if x.md.sb.disk == backend.Outdated && y.md.sb.disk == backend.UpToDate {
			c.setDisk(x, backend.UpToDate)
		}
	}
	a.md.crashed, b.md.crashed = false, false
}

// refuse drops a connection attempt for good: both sides go StandAlone.
func (c *Cluster) refuse(a, b *replica, why string) {
	a.standAlone[b.node] = true
	b.standAlone[a.node] = true
	c.logf("%s %s-%s: %s conn( Connecting -> StandAlone )", a.config.Name, a.node, b.node, why)
}

// disconnect drops an established connection. Unless the goodbye was
// graceful (which flushes first), whatever either side sent since its last
// flush may be missing on the other, so it is marked out of sync.
func (c *Cluster) disconnect(key connKey, graceful bool) {
	conn := c.conns[key]
	delete(c.conns, key)
	if conn.sync != nil {
		c.logf("%s %s-%s: resync aborted, %d bytes left", key.resource, conn.sync.source, conn.sync.target,
			c.replicaOf(key.resource, conn.sync.source).md.bitmapFor(conn.sync.target).bytes())
	}
	for _, pair := range [][2]string{{key.a, key.b}, {key.b, key.a}} {
		r := c.replicaOf(key.resource, pair[0])
		if r == nil {
			continue
		}
		if r.md != nil && !graceful {
			r.md.bitmapFor(pair[1]).union(r.tlFor(pair[1]))
		}
		r.tlFor(pair[1]).reset()
		if peer := c.replicaOf(key.resource, pair[1]); peer != nil {
			disk := peer.disk()
			r.peerOutdated[pair[1]] = disk == backend.Outdated || disk == backend.Inconsistent
		}
	}
	c.logf("%s %s-%s: conn( Connected -> Connecting )", key.resource, key.a, key.b)
	for _, pair := range [][2]string{{key.a, key.b}, {key.b, key.a}} {
		c.rotateOnLostPeer(c.replicaOf(key.resource, pair[0]), c.replicaOf(key.resource, pair[1]))
	}
}

// rotateOnLostPeer: DRBD 8.4 starts a new generation on a Primary the moment
// it loses contact with a peer's good data, written or not, so that a peer
// promoted behind its back meanwhile is a split brain when they meet again
// (seen on DRBD 8.4.11 in ci/vmtest TestLivePrimaryReplacedByForceIsASplitBrain:
// "new current UUID" at "PingAck did not arrive in time"). A peer that left
// Outdated (a graceful leave under fencing) costs no new generation, nor does
// a node that crashed: it does nothing at all. DRBD 9 waits for the first
// write the peer misses; the simulation keeps that where it models DRBD 9's
// quorum.
func (c *Cluster) rotateOnLostPeer(r, peer *replica) {
	if c.opts.Quorum || r == nil || peer == nil || r.down || r.md == nil || peer.md == nil ||
		r.role != backend.Primary || r.md.sb.disk != backend.UpToDate {
		return
	}
	if disk := peer.disk(); disk != backend.UpToDate && disk != backend.Inconsistent {
		return
	}
	c.rotateForMissing(c.receivers(r), []string{peer.node})
}

// rehandshake re-runs the handshake of an established, idle connection after a
// generation changed under it (a forced promotion, a finished resync).
func (c *Cluster) rehandshake(a, b *replica) {
	key := keyOf(a.config.Name, a.node, b.node)
	conn, ok := c.conns[key]
	if !ok || conn.sync != nil || a.md == nil || b.md == nil {
		return
	}
	if a.node > b.node {
		a, b = b, a
	}
	delete(c.conns, key)
	c.connect(a, b)
}

// syncTargetOf is the resync that r is the target of, if one runs.
func (c *Cluster) syncTargetOf(r *replica) *resyncState {
	for _, peer := range r.peers() {
		if conn, ok := c.conns[keyOf(r.config.Name, r.node, peer)]; ok && conn.sync != nil && conn.sync.target == r.node {
			return conn.sync
		}
	}
	return nil
}

func (c *Cluster) setDisk(r *replica, disk backend.DiskState) {
	if r.md.sb.disk == disk {
		return
	}
	c.logf("%s %s: disk( %s -> %s )", r.config.Name, r.node, r.md.sb.disk, disk)
	r.md.sb.disk = disk
	c.writeSuperblock(r)
}

// writeSuperblock persists the superblock on the backing volume. DRBD writes
// metadata with a flush, so it is on stable storage when this returns.
func (c *Cluster) writeSuperblock(r *replica) {
	if _, err := r.backing.WriteAt(r.md.sb.encode(), int64(r.usableBytes)); err != nil {
		c.logf("%s %s: meta-data write failed: %v", r.config.Name, r.node, err)
		return
	}
	if err := r.backing.Sync(); err != nil {
		c.logf("%s %s: meta-data flush failed: %v", r.config.Name, r.node, err)
		return
	}
	r.md.unsynced.reset()
}

// failDisk: r's backing device failed a write (a full pool, a read-only
// zvol), and DRBD detaches it (on-io-error detach): the replica is Diskless
// for good -- no reconnect attaches it again; the node agent's next Up does
// -- while its peers' bitmaps collect what it misses. Its metadata stays on
// the volume as DRBD last wrote it. A SyncTarget's resync stops with it.
func (c *Cluster) failDisk(r *replica) {
	if r.md == nil {
		return
	}
	c.logf("%s %s: disk( %s -> Failed ) -> Diskless: the backing device refused a write", r.config.Name, r.node, r.md.sb.disk)
	for _, peer := range r.peers() {
		if conn := c.conns[keyOf(r.config.Name, r.node, peer)]; conn != nil && conn.sync != nil {
			conn.sync = nil
		}
	}
	_ = r.backing.Close()
	r.backing, r.md = nil, nil
}
