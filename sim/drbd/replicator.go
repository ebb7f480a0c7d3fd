package drbd

import (
	"fmt"
	"maps"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// nodeView is one node's backend.Replicator.
type nodeView struct {
	c    *Cluster
	name string
}

var _ backend.Replicator = (*nodeView)(nil)

// alive returns the node, or ErrNodeDown while it is crashed.
func (v *nodeView) alive() (*node, error) {
	n := v.c.nodes[v.name]
	if !n.alive {
		return nil, nodeDown(v.name)
	}
	return n, nil
}

// aliveWith returns the node, when it is up, and its part of config, when
// config is one DRBD takes.
func (v *nodeView) aliveWith(config backend.ResourceConfig) (*node, backend.ResourceNode, error) {
	n, err := v.alive()
	if err != nil {
		return nil, backend.ResourceNode{}, err
	}
	self, err := checkConfig(config, v.name)
	return n, self, err
}

// upReplica returns the resource's replica after observing the fabric.
func (v *nodeView) upReplica(resource string) (*replica, error) {
	n, err := v.alive()
	if err != nil {
		return nil, err
	}
	r, ok := n.up[resource]
	if !ok {
		return nil, noSuchResource(resource)
	}
	v.c.observe(resource)
	return r, nil
}

func (v *nodeView) HasMetadata(config backend.ResourceConfig) (bool, error) {
	n, self, err := v.aliveWith(config)
	if err != nil || self.Volume == "" {
		return false, err
	}
	if r, ok := n.up[config.Name]; ok && r.self.Volume == self.Volume {
		return true, nil // attached: the metadata is in use
	}
	attachment, err := v.c.openBacking(n, self.Volume)
	if err != nil {
		return false, err
	}
	defer attachment.device.Close()
	return attachment.found, nil
}

func (v *nodeView) CreateMetadata(config backend.ResourceConfig) error {
	n, self, err := v.aliveWith(config)
	if err != nil {
		return err
	}
	if self.Volume == "" {
		return backend.Refusal(backend.ErrInvalid, "drbdadm", "%s: no disk on %s to create meta-data on", config.Name, v.name)
	}
	for _, resource := range slices.Sorted(maps.Keys(n.up)) {
		if r := n.up[resource]; resource == config.Name || r.self.Volume == self.Volume {
			return backend.Refusal(backend.ErrRefused, "drbdmeta", "Device '%d' is configured!", r.config.Minor)
		}
	}
	attachment, err := v.c.openBacking(n, self.Volume)
	if err != nil {
		return err
	}
	defer attachment.device.Close()
	if attachment.found {
		return backend.Refusal(backend.ErrRefused, "drbdmeta",
			"You want me to create a v09 style flexible-size internal meta data block.\n"+
				"There appears to be a v09 flexible-size internal meta data block already in place on %s at byte offset %d\n"+
				"Do you really want to overwrite the existing meta-data?\nstdin not a TTY, not waiting for confirmation\nOperation cancelled.",
			self.Volume, attachment.usableBytes)
	}
	sb := superblock{origin: v.c.mint.origin, serial: v.c.mint.next(), disk: backend.Inconsistent, sizeBytes: attachment.sizeBytes}
	if _, err := attachment.device.WriteAt(sb.encode(), int64(attachment.usableBytes)); err != nil {
		return backend.Refusal(backend.ErrRefused, "drbdmeta", "%s: writing meta-data: %v", self.Volume, err)
	}
	if err := attachment.device.Sync(); err != nil {
		return backend.Refusal(backend.ErrRefused, "drbdmeta", "%s: flushing meta-data: %v", self.Volume, err)
	}
	v.c.store[storeKey{v.name, self.Volume}] = newMetadata(config.Name, self.Volume, sb)
	v.c.logf("%s %s: create-md on %s (%d usable bytes)", config.Name, v.name, self.Volume, attachment.usableBytes)
	return nil
}

func (v *nodeView) Up(config backend.ResourceConfig) error {
	n, self, err := v.aliveWith(config)
	if err != nil {
		return err
	}
	if r, ok := n.up[config.Name]; ok {
		if !sameConfig(r.config, config) {
			return changedConfig(r.config, config, self, r.self)
		}
		if r.self.Volume != "" && r.md == nil {
			return v.reattach(n, r)
		}
		v.c.observe(config.Name)
		return nil
	}
	if err := v.checkClaims(n, config, self); err != nil {
		return err
	}
	r := &replica{node: v.name, config: copyConfig(config), self: self, role: backend.Secondary,
		standAlone: map[string]bool{}, tl: map[string]*blockSet{}, peerOutdated: map[string]bool{}, quorum: true,
		peerNodes: otherNodes(config, v.name, false), diskfulPeerNodes: otherNodes(config, v.name, true)}
	if self.Volume != "" {
		if err := v.attach(n, r); err != nil {
			return err
		}
	}
	n.up[config.Name] = r
	v.c.logf("%s %s: up: minor %d port %d node-id %d disk %s", config.Name, v.name, config.Minor, config.Port, self.NodeID, r.disk())
	v.c.observe(config.Name)
	v.c.checkInvariants()
	return nil
}

// checkClaims refuses a minor, port or backing volume that another resource
// on this node holds.
func (v *nodeView) checkClaims(n *node, config backend.ResourceConfig, self backend.ResourceNode) error {
	for _, resource := range slices.Sorted(maps.Keys(n.up)) {
		other := n.up[resource]
		switch {
		case other.config.Minor == config.Minor:
			return failure(backend.ErrExists, fmt.Sprint(config.Minor), errMinorOrVolumeUsed)
		case other.config.Port == config.Port:
			return failure(backend.ErrExists, config.Name, errLocalAddr)
		case self.Volume != "" && other.self.Volume == self.Volume:
			return failure(backend.ErrBusy, fmt.Sprint(config.Minor), errBdclaimDisk)
		}
	}
	return nil
}

// attach opens the replica's backing volume and its metadata. The superblock
// on the volume is the truth; the bitmaps kept beside it count only when they
// belong to that very superblock.
func (v *nodeView) attach(n *node, r *replica) error {
	attachment, err := v.c.openBacking(n, r.self.Volume)
	if err != nil {
		return err
	}
	if !attachment.found {
		attachment.device.Close()
		return failure(backend.ErrNotFound, fmt.Sprint(r.config.Minor), errMdInvalid)
	}
	sb := attachment.sb
	key := storeKey{v.name, r.self.Volume}
	md := v.c.store[key]
	if md == nil || md.sb.origin != sb.origin || md.sb.serial != sb.serial || md.sb.current != sb.current {
		md = newMetadata(r.config.Name, r.self.Volume, sb)
		v.c.store[key] = md
		v.c.logf("%s %s: adopting meta-data found on %s", r.config.Name, v.name, r.self.Volume)
	}
	md.sb = sb
	r.backing, r.md, r.usableBytes = attachment.device, md, attachment.usableBytes
	return nil
}

// reattach gives a running replica its disk back after DRBD detached it
// (drbdadm attach), and hands the disk to a handshake with each connected
// peer: the bitmaps decide what to resync. The attaching disk negotiates, so
// even a Primary may become SyncTarget (ci/vmtest:
// TestFullPoolUnderThePrimary).
func (v *nodeView) reattach(n *node, r *replica) error {
	v.c.observe(r.config.Name)
	if err := v.attach(n, r); err != nil {
		return err
	}
	// DRBD writes its metadata as it attaches: a disk that still refuses
	// writes (the pool is still full) fails the attach and stays detached,
	// so nothing is resynced onto it and no peer starts a new generation.
	if _, err := r.backing.WriteAt(r.md.sb.encode(), int64(r.usableBytes)); err != nil {
		_ = r.backing.Close()
		r.backing, r.md = nil, nil
		v.c.logf("%s %s: attach failed: meta-data write: %v", r.config.Name, v.name, err)
		// drbdadm attach first has drbdmeta apply the activity log, and that
		// write is what a full pool refuses (ci/vmtest:
		// TestFullPoolDetachesTheSecondaryUntilTheAgentAttachesIt).
		return backend.Refusal(backend.ErrRefused, "drbdmeta",
			"pwrite(...) in md_initialize_common:AL failed: No space left on device; Command 'drbdmeta %d v08 %s internal apply-al' terminated with exit code 10",
			r.config.Minor, r.self.Volume)
	}
	v.c.logf("%s %s: attach: disk %s", r.config.Name, v.name, r.disk())
	r.attaching = true
	for _, p := range v.c.connectedPeers(r) {
		v.c.rehandshake(r, p)
	}
	r.attaching = false
	v.c.observe(r.config.Name)
	v.c.checkInvariants()
	return nil
}

func (v *nodeView) Down(resource string) error {
	n, err := v.alive()
	if err != nil {
		return err
	}
	r, ok := n.up[resource]
	if !ok {
		return nil
	}
	v.c.observe(resource)
	if r.opens > 0 {
		return stateChangeFailed(backend.ErrBusy, resource, ssDeviceInUse)
	}
	v.c.takeDown(r)
	delete(n.up, resource)
	v.c.observe(resource)
	v.c.checkInvariants()
	return nil
}

// takeDown demotes, says goodbye to the peers, flushes and detaches. A
// Secondary that leaves a Primary is Outdated (fencing resource-only): the
// Primary goes on writing without it.
func (c *Cluster) takeDown(r *replica) {
	resource := r.config.Name
	if r.role == backend.Primary {
		r.role = backend.Secondary
		c.logf("%s %s: role( Primary -> Secondary )", resource, r.node)
	}
	for _, peer := range c.connectedPeers(r) {
		if c.opts.Fencing == FenceResourceOnly && r.md != nil && peer.role == backend.Primary && r.md.sb.disk == backend.UpToDate {
			c.setDisk(r, backend.Outdated)
		}
		c.disconnect(keyOf(resource, r.node, peer.node), true)
	}
	if r.md != nil {
		if err := r.backing.Sync(); err == nil {
			r.md.unsynced.reset()
			r.md.al.clear()
		}
		r.md.crashed = false
		r.backing.Close()
	}
	r.down = true
	c.logf("%s %s: down", resource, r.node)
}

func (v *nodeView) Primary(resource string, force bool) error {
	r, err := v.upReplica(resource)
	if err != nil {
		return err
	}
	if r.role == backend.Primary {
		return nil
	}
	for _, p := range v.c.component(r) {
		if p.role == backend.Primary {
			return stateChangeFailed(backend.ErrRefused, resource, ssTwoPrimaries)
		}
	}
	peers := v.c.connectedPeers(r)
	if !v.c.hasQuorum(r) {
		return stateChangeFailed(backend.ErrRefused, resource, ssNoQuorum)
	}
	forceData := !v.c.hasUpToDateAccess(r, peers)
	if forceData && (!force || r.md == nil) {
		return stateChangeFailed(backend.ErrRefused, resource, ssNoUpToDateDisk)
	}
	unfenced := v.c.unfencedPeers(r)
	if len(unfenced) > 0 && !force {
		return stateChangeFailed(backend.ErrRefused, resource, ssPrimaryNop)
	}
	if forceData {
		v.c.forceUpToDate(r)
	}
	if len(unfenced) > 0 {
		v.c.logf("%s %s: Forced into split brain situation! (%v unknown)", resource, v.name, unfenced)
		for _, peer := range unfenced {
			r.peerOutdated[peer] = true
		}
	}
	// DRBD 8.4 starts a new generation when it is promoted without all its
	// peers: two nodes promoted apart are a split brain even before they write.
	holders := v.c.receivers(r)
	v.c.rotateForMissing(holders, missingNodes(r, holders))
	r.role = backend.Primary
	v.c.logf("%s %s: role( Secondary -> Primary )", resource, v.name)
	v.c.checkInvariants()
	return nil
}

// hasUpToDateAccess: a Primary needs UpToDate data, its own or a Connected
// peer's (a diskless Primary, a SyncTarget).
func (c *Cluster) hasUpToDateAccess(r *replica, peers []*replica) bool {
	if r.disk() == backend.UpToDate {
		return true
	}
	for _, p := range peers {
		if p.disk() == backend.UpToDate {
			return true
		}
	}
	return false
}

// unfencedPeers are the diskful peers that, under fencing resource-only, stop
// a promotion: not Connected and not known to be Outdated. With quorum
// enabled a node that has quorum knows that no other partition can promote.
func (c *Cluster) unfencedPeers(r *replica) []string {
	if c.opts.Fencing != FenceResourceOnly || (c.opts.Quorum && c.hasQuorum(r)) {
		return nil
	}
	var out []string
	for _, peer := range r.diskfulPeers() {
		if !c.connected(r, peer) && !r.peerOutdated[peer] {
			out = append(out, peer)
		}
	}
	return out
}

// forceUpToDate is `primary --force`: the local data becomes a new generation
// that every other diskful node misses, and connected peers re-handshake
// against it (a fresh peer gets the initial full sync).
func (c *Cluster) forceUpToDate(r *replica) {
	c.logf("%s %s: Forced to consider local data as UpToDate!", r.config.Name, r.node)
	r.md.rotate(c.mint.next(), r.diskfulPeers())
	r.md.sb.disk = backend.UpToDate
	c.writeSuperblock(r)
	for _, p := range c.connectedPeers(r) {
		c.rehandshake(r, p)
	}
}

func (v *nodeView) Secondary(resource string) error {
	r, err := v.upReplica(resource)
	if err != nil {
		return err
	}
	if r.role == backend.Secondary {
		return nil
	}
	if r.opens > 0 {
		return stateChangeFailed(backend.ErrBusy, resource, ssDeviceInUse)
	}
	r.role = backend.Secondary
	v.c.logf("%s %s: role( Primary -> Secondary )", resource, v.name)
	return nil
}

func (v *nodeView) NewCurrentUUID(resource string, clearBitmap bool) error {
	r, err := v.upReplica(resource)
	if err != nil {
		return err
	}
	if r.md == nil {
		return failure(backend.ErrInvalid, fmt.Sprint(r.config.Minor), errNoDisk)
	}
	var connected []*replica
	var offline []string
	for _, peer := range r.diskfulPeers() {
		switch {
		case v.c.connected(r, peer):
			connected = append(connected, v.c.replicaOf(resource, peer))
		case !r.standAlone[peer]:
			offline = append(offline, peer)
		}
	}
	if clearBitmap && skipsInitialSync(r, connected, offline) {
		v.c.skipInitialSync(r, connected)
		return nil
	}
	if len(connected) > 0 || len(offline) > 0 {
		return failure(backend.ErrRefused, fmt.Sprint(r.config.Minor), errConnected)
	}
	r.md.rotate(v.c.mint.next(), r.diskfulPeers())
	if clearBitmap {
		for _, peer := range r.diskfulPeers() {
			r.md.bitmapFor(peer).reset()
		}
	}
	v.c.writeSuperblock(r)
	v.c.logf("%s %s: new-current-uuid (clear-bitmap %t)", resource, v.name, clearBitmap)
	return nil
}

// skipsInitialSync: `new-current-uuid --clear-bitmap` skips the initial sync
// only between just-created replicas that are all Connected (DRBD 8.4 wants
// the connection up; an unconnected peer would miss the shared generation).
func skipsInitialSync(r *replica, connected []*replica, offline []string) bool {
	if r.md.sb.current != 0 || len(connected) == 0 || len(offline) > 0 {
		return false
	}
	for _, p := range connected {
		if p.md.sb.current != 0 {
			return false
		}
	}
	return true
}

func (c *Cluster) skipInitialSync(r *replica, connected []*replica) {
	uuid := c.mint.next()
	c.logf("%s %s: Preparing to skip initial sync", r.config.Name, r.node)
	for _, x := range append([]*replica{r}, connected...) {
		x.md.rotate(uuid, nil)
		for _, peer := range x.diskfulPeers() {
			x.md.bitmapFor(peer).reset()
		}
		c.logf("%s %s: disk( %s -> UpToDate )", x.config.Name, x.node, x.md.sb.disk)
		x.md.sb.disk = backend.UpToDate
		c.writeSuperblock(x)
	}
}

func (v *nodeView) Show(resource string) (backend.ResourceConfig, error) {
	n, err := v.alive()
	if err != nil {
		return backend.ResourceConfig{}, err
	}
	r, ok := n.up[resource]
	if !ok {
		return backend.ResourceConfig{}, noSuchResource(resource)
	}
	return copyConfig(r.config), nil
}

func (v *nodeView) Status(resource string) (backend.ResourceStatus, error) {
	r, err := v.upReplica(resource)
	if err != nil {
		return backend.ResourceStatus{}, err
	}
	status := backend.ResourceStatus{Name: resource, Role: r.role, Disk: r.disk(), Quorum: v.c.hasQuorum(r)}
	for _, peer := range r.peers() {
		status.Peers = append(status.Peers, v.c.peerStatus(r, peer))
	}
	return status, nil
}

func (c *Cluster) peerStatus(r *replica, peer string) backend.PeerStatus {
	entry, _ := entryOf(r.config, peer)
	s := backend.PeerStatus{Node: peer, Connection: backend.Connecting, Role: backend.Secondary, Disk: backend.Outdated}
	if entry.Volume == "" {
		s.Disk = backend.Diskless
	}
	if r.standAlone[peer] {
		s.Connection = backend.StandAlone
	}
	if c.connected(r, peer) {
		p := c.replicaOf(r.config.Name, peer)
		s.Connection, s.Role, s.Disk = backend.Connected, p.role, p.disk()
	}
	if r.md != nil {
		s.OutOfSyncBytes = r.md.bitmapFor(peer).bytes()
	}
	return s
}

func (v *nodeView) Open(resource string) (backend.Device, error) {
	r, err := v.upReplica(resource)
	if err != nil {
		return nil, err
	}
	if r.role != backend.Primary {
		// DRBD 8.4 refuses any open of a Secondary (EMEDIUMTYPE); 9 allows
		// read-only opens. The simulation refuses what either refuses.
		return nil, backend.Refusal(backend.ErrRefused, "drbd", "open /dev/drbd%d: Wrong medium type", r.config.Minor)
	}
	r.opens++
	return &device{c: v.c, r: r}, nil
}

// MetadataBytes is the superblock the simulation keeps at the end of every
// backing volume.
func (v *nodeView) MetadataBytes(uint64) uint64 { return superblockBytes }

var _ backend.MetadataSizer = (*nodeView)(nil)
