package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Provisioning says whether a volume reserves its size when it is created.
// +kubebuilder:validation:Enum=thin;thick
type Provisioning string

const (
	// ProvisioningThin volumes reserve nothing; writes take space as they come.
	ProvisioningThin Provisioning = "thin"
	// ProvisioningThick volumes reserve their full size up front.
	ProvisioningThick Provisioning = "thick"
)

// Backend is the storage mode of a site (ARCHITECTURE.md §4).
// +kubebuilder:validation:Enum=zfs-drbd;btrfs
type Backend string

const (
	// BackendZFSDRBD keeps each replica in a ZFS zvol and replicates inside the
	// site with DRBD (protocol C): production, on hosts with both kernel modules.
	BackendZFSDRBD Backend = "zfs-drbd"
	// BackendBtrfs keeps each volume as a file in its own btrfs subvolume, one
	// replica per site and no DRBD: hosts without the ZFS and DRBD modules.
	BackendBtrfs Backend = "btrfs"
)

// PoolLayout describes the storage pool every node of a cluster carries.
type PoolLayout struct {
	// Name is the pool's name on each node (the ZFS pool, or the btrfs mount's
	// directory name).
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9_.:-]*$`
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// Provisioning is the pool's default for new volumes.
	// +kubebuilder:default=thin
	// +optional
	Provisioning Provisioning `json:"provisioning,omitempty"`

	// Backend is the storage mode.
	// +kubebuilder:default=zfs-drbd
	// +optional
	Backend Backend `json:"backend,omitempty"`

	// ThinOvercommitPercent bounds thin provisioning: a node takes a new thin
	// volume while the sizes of every volume on its pool, the new one's
	// included, add up to at most the pool's size times this percentage (400:
	// an overcommit ratio of 4). Thin volumes take pool space only as they
	// are written; thick ones reserve their full size, which this bound does
	// not loosen. 100 provisions no more than the pool holds.
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:default=400
	// +optional
	ThinOvercommitPercent int32 `json:"thinOvercommitPercent,omitempty"`
}

// PortRange is an inclusive range of TCP ports. DRBD takes one port per volume,
// the lowest free one, shared by every replica of that volume.
// +kubebuilder:validation:XValidation:rule="self.min <= self.max",message="the range's min must not exceed its max"
type PortRange struct {
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Min int32 `json:"min"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +required
	Max int32 `json:"max"`
}

// MinorRange is an inclusive range of DRBD device minors (/dev/drbdN). DRBD takes
// one minor per volume, the lowest free one. 1048575 is DRBD's largest minor.
// +kubebuilder:validation:XValidation:rule="self.min <= self.max",message="the range's min must not exceed its max"
type MinorRange struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048575
	// +required
	Min int32 `json:"min"`
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048575
	// +required
	Max int32 `json:"max"`
}

// StorageLayout is the sizing a cluster is deployed with: the draft carries it
// for review and approval, and the StorageCluster it expands into carries the
// same fields, so the two validate alike.
type StorageLayout struct {
	// Pool is the pool every node carries.
	// +required
	Pool PoolLayout `json:"pool"`

	// PlaceCount is the number of nodes that hold a replica of each volume
	// inside the site. DRBD node-ids run 0..15, hence at most 16.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +kubebuilder:default=2
	// +optional
	PlaceCount int32 `json:"placeCount,omitempty"`

	// DRBDPorts is the range DRBD ports are allocated from (LINSTOR's default).
	// +kubebuilder:default={min: 7000, max: 7999}
	// +optional
	DRBDPorts PortRange `json:"drbdPorts,omitzero"`

	// DRBDMinors is the range DRBD minors are allocated from (LINSTOR's default).
	// +kubebuilder:default={min: 1000, max: 49999}
	// +optional
	DRBDMinors MinorRange `json:"drbdMinors,omitzero"`

	// ReplicationInterval is how often a protected volume ships a snapshot to
	// its peer site: the recovery point objective of an unplanned fail-over.
	// A positive duration in Go's notation ("5m", "90s"); the pattern admits
	// only what Go parses, so what the API server accepts the operator can read.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="the interval must be positive"
	// +kubebuilder:default="5m"
	// +optional
	ReplicationInterval metav1.Duration `json:"replicationInterval,omitzero"`

	// SnapshotRetention is how many replicated snapshots a volume keeps. At
	// least two: the newest snapshot both sites hold is the base of the next
	// delta, so it must survive the arrival of the one after it.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=3
	// +optional
	SnapshotRetention int32 `json:"snapshotRetention,omitempty"`
}

// PoolUsage is a pool's space accounting (or the sum over a cluster's pools).
type PoolUsage struct {
	// SizeBytes is the capacity.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`
	// AllocatedBytes is written data plus the reservations of thick volumes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	AllocatedBytes int64 `json:"allocatedBytes,omitempty"`
	// FreeBytes is SizeBytes minus AllocatedBytes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	FreeBytes int64 `json:"freeBytes,omitempty"`
}
