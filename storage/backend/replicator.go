package backend

// Role is a DRBD resource's role on one node.
type Role uint8

const (
	// Secondary: the device refuses writes and follows a primary.
	Secondary Role = iota
	// Primary: the device takes writes and replicates them to its peers.
	Primary
)

func (r Role) String() string {
	switch r {
	case Secondary:
		return "Secondary"
	case Primary:
		return "Primary"
	}
	return "Role(?)"
}

// DiskState is the state of a node's local copy, as DRBD names it.
type DiskState uint8

const (
	Diskless DiskState = iota
	Inconsistent
	Outdated
	UpToDate
)

func (d DiskState) String() string {
	switch d {
	case Diskless:
		return "Diskless"
	case Inconsistent:
		return "Inconsistent"
	case Outdated:
		return "Outdated"
	case UpToDate:
		return "UpToDate"
	}
	return "DiskState(?)"
}

// ConnectionState is the state of the link to one peer, as DRBD names it.
type ConnectionState uint8

const (
	StandAlone ConnectionState = iota // not trying to connect (after split brain or disconnect)
	Connecting                        // trying; the peer is unreachable or not up
	Connected                         // replicating (possibly resyncing)
)

func (c ConnectionState) String() string {
	switch c {
	case StandAlone:
		return "StandAlone"
	case Connecting:
		return "Connecting"
	case Connected:
		return "Connected"
	}
	return "ConnectionState(?)"
}

// ResourceNode is one node's place in a resource: what the core allocated for it.
type ResourceNode struct {
	Node    string // node name
	NodeID  uint8  // 0..15, lowest free among the resource's replicas
	Address string // host:port this node listens on for the resource
	Volume  string // the pool volume backing the node's replica ("" = diskless)
}

// ResourceConfig is a DRBD resource as the core allocated it. Port and minor are
// one value per resource, shared by every node; none of them ever changes.
type ResourceConfig struct {
	Name  string
	Minor uint32
	Port  uint16
	Nodes []ResourceNode // sorted by NodeID
}

// PeerStatus is the view of one peer from a node.
type PeerStatus struct {
	Node       string
	Connection ConnectionState
	Role       Role // of a peer that is not Connected: Secondary (DRBD says Unknown)
	// Disk of a peer that is not Connected is Outdated (DRBD says DUnknown): a
	// copy this node cannot vouch for, which the core must not count as good.
	// A peer configured without a disk is Diskless.
	Disk           DiskState
	OutOfSyncBytes uint64 // what a resync still has to copy to or from this peer
}

// ResourceStatus is a resource's state on one node.
type ResourceStatus struct {
	Name  string
	Role  Role
	Disk  DiskState
	Peers []PeerStatus // sorted by node name
	// Quorum is false when the node sees too few up-to-date peers to take writes.
	Quorum bool
}

// Replicator drives DRBD on one node. Methods are idempotent where DRBD is
// (Up on an up resource, Down on a down one); refusals carry DRBD's own words.
type Replicator interface {
	// HasMetadata probes for DRBD metadata on the node's backing volume
	// (`drbdadm dump-md`): existing metadata is adopted, never re-created. It
	// takes the configuration because the probe reads the backing volume the
	// configuration names, as drbdadm reads it from the resource file; a
	// diskless node has no metadata.
	HasMetadata(config ResourceConfig) (bool, error)
	// CreateMetadata writes fresh metadata; over existing metadata it is ErrRefused.
	CreateMetadata(config ResourceConfig) error
	// Up attaches the backing volume and connects to the peers.
	Up(config ResourceConfig) error
	// Down disconnects and detaches; the data and metadata stay.
	Down(resource string) error
	// Primary promotes the node. A second primary is ErrRefused, as is promoting
	// without up-to-date data unless force is set.
	Primary(resource string, force bool) error
	// Secondary demotes the node; with the device open it is ErrBusy.
	Secondary(resource string) error
	// NewCurrentUUID with clearBitmap starts a resource whose replicas are known to
	// be identical (fresh volumes, or clones of one received snapshot) without an
	// initial sync.
	NewCurrentUUID(resource string, clearBitmap bool) error
	// Show reports the configuration the kernel runs for the resource (`drbdsetup
	// show`): adoption takes the live port and minor from it, never from a record.
	Show(resource string) (ResourceConfig, error)
	// Status reports the resource's state on this node.
	Status(resource string) (ResourceStatus, error)
	// Open opens the resource's device; writes need the Primary role.
	Open(resource string) (Device, error)
}

// MetadataSizer is implemented by replicators whose metadata lives inside the
// backing volume (DRBD's internal metadata, at its end): a volume that must
// offer its consumer dataBytes needs a backing volume that much larger, or the
// last blocks a consumer was promised do not exist.
type MetadataSizer interface {
	MetadataBytes(dataBytes uint64) uint64
}

// DeviceFencer is implemented by replicators whose device a file system is
// mounted from (DRBD's /dev/drbdN on a Primary): FenceDevice stops every
// write to it (fenced), the file system's included, or lifts that fence. The
// agent fences the device before it demotes it -- a demotion fails while the
// file system is mounted, and the file system would write on meanwhile -- and
// lifts the fence once the device is Primary again. Fencing a Secondary's
// device, which takes no writes, does nothing.
type DeviceFencer interface {
	FenceDevice(resource string, fenced bool) error
}
