package core

import (
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/placement"
	"github.com/baton-dr/baton/storage/replication"
)

// VolumeMode is how a volume is consumed.
type VolumeMode string

const (
	Filesystem VolumeMode = "Filesystem"
	Block      VolumeMode = "Block"
)

// Shape is what a volume is, as opposed to where it lives: carried to the other
// site with its replica, so a fail-over clone looks like its source.
type Shape struct {
	SizeBytes    uint64
	Provisioning backend.Provisioning
	PlaceCount   int
	// FsType is the filesystem asked for; empty expresses no opinion (rule 7).
	FsType     string
	VolumeMode VolumeMode
}

// Origin is the snapshot a clone starts from, on this site.
type Origin struct {
	Dataset  string
	Snapshot string
	GUID     string
}

// Volume is one member of a chain that lives on this site.
type Volume struct {
	chain.Member
	Shape
	// Name is the CSI volume name (the idempotency key); empty for fail-over clones.
	Name string
	// Origin is set for clones (fail-over clones and CSI clones).
	Origin Origin
	// Allocation is the DRBD resource: placement, node-ids, port and minor.
	Allocation placement.Allocation
	// Primary is the node holding the DRBD primary role; empty while fenced.
	Primary string
	// Home is the node where snapshots are taken: the primary, and after a
	// fence the node that was primary last.
	Home string
	// Initialized is set once the volume holds data.
	Initialized bool
	// Present lists the nodes that reported the volume's dataset: one of them
	// that no longer finds it reports an error and creates nothing -- a volume
	// with data is never re-provisioned empty.
	Present []string
	// StandAlone lists the nodes whose DRBD replica of the volume stopped
	// connecting to a peer: DRBD drops the connection on a split brain it
	// cannot resolve (baton resolves none), and only a person can choose the
	// data to discard. Sorted.
	StandAlone []string
	// FsFound is the filesystem a node found or made on the device.
	FsFound   string
	CreatedAt time.Time
	FencedAt  time.Time // when it was demoted or learned of its successor
	// Tail names the snapshot that keeps the writes taken after the last
	// shipped snapshot when the member was superseded (the diverged tail).
	Tail string
	// SuccessorAnnounced is set once the predecessor's site acknowledged this
	// member as its successor; until then Tick keeps announcing it.
	SuccessorAnnounced bool
	// Snapshots are those the primary node reports, oldest first.
	Snapshots []SnapshotInfo
	// Deleting is set by DeleteVolume: nodes destroy the data, then the record goes.
	Deleting bool
	// AdoptionPending marks a record that lost the volume's DRBD values
	// (WithoutDRBDValues) until Adopt read them from the nodes. It is never
	// inferred from the values: a volume without DRBD has no port either.
	// Omitted from the storage API's JSON when false, so a decided record's
	// wire form is what it was before the field (storageapi's wire.golden).
	AdoptionPending bool `json:",omitempty"`
	// Destroyed lists the nodes that reported the data of a deleting volume gone.
	Destroyed []string
	// UserSnapshots are the snapshots taken of the member through CSI.
	UserSnapshots []UserSnapshot
}

// Dataset is the pool volume of the member on each of its nodes.
func (v Volume) Dataset() string { return "vol-" + string(v.Ref.Volume) }

// SnapshotInfo is one snapshot a node reports.
type SnapshotInfo struct {
	Name string
	GUID string
}

// Replica is this site's copy of a member of the other site: the datasets its
// streams are received into, on each receiving node.
type Replica struct {
	Source           chain.Ref
	Root             chain.Ref
	SourceGeneration uint32
	Shape
	// Nodes receive every stream, so that identical clones can start DRBD
	// without an initial sync.
	Nodes []string
	// Received lists what every receiving node reported holding, per node.
	Received map[string][]SnapshotInfo
	// ClonedInto is the fail-over member cloned from this replica; once set,
	// no further stream of the superseded source is received.
	ClonedInto chain.Ref
	// OriginGUID is the snapshot the source started from, when it is a clone.
	OriginGUID string
	CreatedAt  time.Time
}

// Dataset is the pool volume that receives the replica on each node.
func (r Replica) Dataset() string { return "rep-" + string(r.Source.Volume) }

// Receiver is a node of the target site that takes a pairing's streams.
type Receiver struct {
	Node    string
	Address string // where its node agent accepts streams
	// Token is presented with every stream (never logged).
	Token string
}

// Pairing is a replication relationship of a local member, as stored.
type Pairing struct {
	replication.Pairing
	// Receivers are the target site's nodes that take the streams; empty until
	// the target site answered.
	Receivers []Receiver
	// ReaimedAt is when a resync last pointed the pairing at its target.
	ReaimedAt time.Time
}

// Node is one storage node of the site.
type Node struct {
	Name         string
	Address      string // where its node agent accepts streams
	Provisioning backend.Provisioning
	Schedulable  bool
	Usage        backend.Usage
	ReportedAt   time.Time
	// Fenced: the node is known to be down (Kubernetes' out-of-service
	// taint). DRBD has no fence-peer handler here, so this is how a replica
	// on another node learns it may be promoted without the fenced one.
	Fenced bool
}
