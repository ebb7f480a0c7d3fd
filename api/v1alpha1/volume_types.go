package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Volume condition types and reasons.
const (
	// VolumeReadyCondition is true when the member's replicas are set up and
	// its data is where the status says: the volume can be attached.
	VolumeReadyCondition = "Ready"
	// VolumeReadyReason: the volume can be attached.
	VolumeReadyReason = "Ready"
	// VolumeProvisioningReason: replicas are being created.
	VolumeProvisioningReason = "Provisioning"
	// VolumeDataMissingReason: the volume is initialized but no replica holds
	// its data. It is reported, never re-provisioned empty.
	VolumeDataMissingReason = "DataMissing"
	// VolumeDemotedReason: the member was superseded or demoted; it holds data
	// but accepts no writes.
	VolumeDemotedReason = "Demoted"
	// VolumeTombstoneReason: the member was reaped; only its record stays.
	VolumeTombstoneReason = "Tombstone"
	// VolumeDeletingReason: DeleteVolume was called; the nodes destroy the data.
	VolumeDeletingReason = "Deleting"

	// VolumeReplicasUpToDateCondition is true when every replica's disk is
	// UpToDate.
	VolumeReplicasUpToDateCondition = "ReplicasUpToDate"
	// VolumeReplicasUpToDateReason: every replica is UpToDate.
	VolumeReplicasUpToDateReason = "ReplicasUpToDate"
	// VolumeReplicasSyncingReason: a replica is resyncing.
	VolumeReplicasSyncingReason = "ReplicasSyncing"
	// VolumeReplicaMissingReason: fewer replicas than placeCount.
	VolumeReplicaMissingReason = "ReplicaMissing"
	// VolumeSplitBrainReason: a node's DRBD replica stopped connecting to a
	// peer (StandAlone) -- a split brain that needs a person.
	VolumeSplitBrainReason = "SplitBrain"

	// VolumeReplicatingCondition is true while the member ships snapshots to
	// another site.
	VolumeReplicatingCondition = "Replicating"
	// VolumeReplicatingReason: a pairing ships the member's snapshots.
	VolumeReplicatingReason = "Replicating"
	// VolumeNotReplicatedReason: the member has no pairing.
	VolumeNotReplicatedReason = "NotReplicated"
	// VolumeReplicationPausedReason: the member's pairing takes no snapshots
	// (disabled, or the member was superseded).
	VolumeReplicationPausedReason = "ReplicationPaused"

	// VolumeDegradedCondition is true when the member has less protection than
	// asked: fewer nodes than placeCount report its data, or its shipments fail.
	VolumeDegradedCondition = "Degraded"
	// VolumeAsExpectedReason: the member is as protected as asked.
	VolumeAsExpectedReason = "AsExpected"
	// VolumeSyncFailedReason: the member's latest shipments failed.
	VolumeSyncFailedReason = "SyncFailed"
)

// VolumeState is a member's place in its chain.
// +kubebuilder:validation:Enum=Active;Demoted;Tombstone
type VolumeState string

const (
	// VolumeActive is the chain's active end: it holds the data and may be
	// written. At most one member per chain is Active.
	VolumeActive VolumeState = "Active"
	// VolumeDemoted is fenced read-only: superseded by a later member, or
	// demoted for a relocation. Its data and snapshots stay.
	VolumeDemoted VolumeState = "Demoted"
	// VolumeTombstone was reaped: its writable volume is gone, its record and
	// snapshots stay. A tombstone never becomes active again.
	VolumeTombstone VolumeState = "Tombstone"
)

// VolumeReplica is one node's replica of the member inside the site.
type VolumeReplica struct {
	// Node is the StorageNode's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Node string `json:"node"`

	// NodeID is the replica's DRBD node-id, the lowest free one among the
	// volume's replicas.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=15
	// +required
	NodeID int32 `json:"nodeID"`

	// DiskState is the replica's disk state.
	// +optional
	DiskState DiskState `json:"diskState,omitempty"`
}

// VolumeSpec is one chain member on this cluster. Its identity (volumeID, root
// handle, generation, predecessor, origin) is fixed at creation.
// +kubebuilder:validation:XValidation:rule="(self.generation == 0) == !has(self.predecessor)",message="the root (generation 0) has no predecessor and every later member has one",fieldPath=".predecessor"
// +kubebuilder:validation:XValidation:rule="has(self.predecessor) == has(oldSelf.predecessor) && (!has(self.predecessor) || self.predecessor == oldSelf.predecessor)",message="predecessor is immutable",fieldPath=".predecessor"
// +kubebuilder:validation:XValidation:rule="has(self.originSnapshot) == has(oldSelf.originSnapshot) && (!has(self.originSnapshot) || self.originSnapshot == oldSelf.originSnapshot)",message="originSnapshot is immutable",fieldPath=".originSnapshot"
type VolumeSpec struct {
	// VolumeID is the member's UUID on this cluster.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="volumeID is immutable"
	// +required
	VolumeID UUID `json:"volumeID"`

	// SizeBytes is the size a consumer sees. A volume grows, never shrinks.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self >= oldSelf",message="a volume never shrinks"
	// +required
	SizeBytes int64 `json:"sizeBytes"`

	// PlaceCount is the number of nodes of this site that hold a replica.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +required
	PlaceCount int32 `json:"placeCount"`

	// Provisioning says whether the replicas reserve their size.
	// +kubebuilder:default=thin
	// +optional
	Provisioning Provisioning `json:"provisioning,omitempty"`

	// FSType is the filesystem the consumer asked for. Empty expresses no
	// opinion: mount what the device carries, format a blank one as ext4. A
	// named type refuses a device carrying another filesystem.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	FSType string `json:"fsType,omitempty"`

	// VolumeMode is Filesystem or Block (a VM's disk). Preserved across every hop.
	// +kubebuilder:validation:Enum=Filesystem;Block
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="volumeMode is immutable"
	// +kubebuilder:default=Filesystem
	// +optional
	VolumeMode corev1.PersistentVolumeMode `json:"volumeMode,omitempty"`

	// RootHandle is the handle of the chain's root member: the PV's volume
	// handle, kept for ever. A root member's is its own.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="rootHandle is immutable"
	// +required
	RootHandle VolumeHandle `json:"rootHandle"`

	// Generation is the member's hop index in its chain, 0 for the root.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="generation is immutable"
	// +required
	Generation int32 `json:"generation"`

	// Predecessor is the member this one was cloned from by a fail-over or a
	// relocation; empty for the root.
	// +optional
	Predecessor VolumeHandle `json:"predecessor,omitempty"`

	// OriginSnapshot is the snapshot the member was cloned from (a clone or a
	// fail-over clone); absent for a volume created empty.
	// +optional
	OriginSnapshot *OriginSnapshot `json:"originSnapshot,omitempty"`

	// CSIName is the name CreateVolume was called with, its idempotency key;
	// empty for a fail-over clone, which no CreateVolume asked for.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="csiName is immutable"
	// +optional
	CSIName string `json:"csiName,omitempty"`
}

// VolumeStatus is what the operator observed of the member.
// +kubebuilder:validation:XValidation:rule="!has(self.successor) || !has(self.state) || self.state != 'Active'",message="a member that knows its successor is not Active",fieldPath=".state"
type VolumeStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// State is the member's place in its chain.
	// +optional
	State VolumeState `json:"state,omitempty"`

	// Successor is the member that superseded this one, once learned.
	// +optional
	Successor VolumeHandle `json:"successor,omitempty"`

	// Replicas are the member's replicas inside the site, sorted by node.
	// +listType=map
	// +listMapKey=node
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Replicas []VolumeReplica `json:"replicas,omitempty"`

	// DRBDPort is the volume's DRBD port, shared by its replicas. Once set it
	// never changes: peers and the kernel hold it.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	DRBDPort *int32 `json:"drbdPort,omitempty"`

	// DRBDMinor is the volume's DRBD minor. Once set it never changes.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048575
	// +optional
	DRBDMinor *int32 `json:"drbdMinor,omitempty"`

	// Initialized is set once the volume holds data. Once true it stays true:
	// a volume that is initialized must find its data, and is never
	// re-provisioned empty.
	// +optional
	Initialized bool `json:"initialized,omitempty"`

	// FSType is the filesystem found on (or formatted onto) the device, which
	// a spec without fsType remembers here.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	FSType string `json:"fsType,omitempty"`

	// Conditions: Ready, ReplicasUpToDate, Replicating, Degraded.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	VolumeRecord `json:",inline"`
}

// VolumeRecord is the rest of what the storage core records of a member, kept
// here so that the CRDs are the whole state (no hidden database): the operator
// writes it and reads it back exactly as written.
type VolumeRecord struct {
	// DRBDResource is the name of the volume's DRBD resource.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	DRBDResource string `json:"drbdResource,omitempty"`

	// Primary is the node holding the DRBD primary role; empty while fenced.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Primary string `json:"primary,omitempty"`

	// Home is the node where snapshots are taken: the primary, and after a
	// fence the node that was primary last.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Home string `json:"home,omitempty"`

	// PresentNodes are the nodes that reported the volume's dataset. One of
	// them that no longer finds it reports an error and creates nothing: a
	// volume with data is never re-provisioned empty.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	PresentNodes []string `json:"presentNodes,omitempty"`

	// StandAloneNodes are the nodes whose DRBD replica stopped connecting to
	// a peer: a split brain DRBD dropped the connection on, which a person
	// resolves by choosing the data to discard.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	StandAloneNodes []string `json:"standAloneNodes,omitempty"`

	// CreatedAt is when the member was created.
	// +optional
	CreatedAt Timestamp `json:"createdAt,omitempty"`

	// FencedAt is when the member was demoted or learned of its successor.
	// +optional
	FencedAt Timestamp `json:"fencedAt,omitempty"`

	// Tail names the snapshot that keeps the writes a superseded member took
	// after its last shipped snapshot (the diverged tail).
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Tail string `json:"tail,omitempty"`

	// SuccessorAnnounced is set once the predecessor's site acknowledged this
	// member as its successor.
	// +optional
	SuccessorAnnounced bool `json:"successorAnnounced,omitempty"`

	// Snapshots are those the home node reports, oldest first.
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Snapshots []SnapshotRef `json:"snapshots,omitempty"`

	// Deleting is set by DeleteVolume: the nodes destroy the data, then the
	// record goes.
	// +optional
	Deleting bool `json:"deleting,omitempty"`

	// AdoptionPending is set on a record that keeps none of the volume's DRBD
	// values -- restored from a backup, or converted from a control plane
	// that keeps none -- until the operator adopted what the nodes run.
	// Absent, as on every record written before it existed, the record is
	// decided: a volume without a port (one without DRBD) is not pending.
	// +optional
	AdoptionPending bool `json:"adoptionPending,omitempty"`

	// DestroyedNodes are the nodes that reported the data of a deleting
	// volume gone.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	DestroyedNodes []string `json:"destroyedNodes,omitempty"`

	// UserSnapshots are the snapshots taken of the member through CSI
	// (CreateSnapshot, and the one a clone of a volume is made from), in the
	// order they were asked for. CreateSnapshot is idempotent by their names.
	// +listType=map
	// +listMapKey=snapshotID
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	UserSnapshots []UserSnapshot `json:"userSnapshots,omitempty"`
}

// UserSnapshot is one snapshot asked for through CSI. Its CSI snapshot ID is
// "<member>@<snapshotID>"; in the pool it is the member's snapshot named
// "csi-<snapshotID>".
type UserSnapshot struct {
	// SnapshotID is the snapshot's own UUID.
	// +required
	SnapshotID UUID `json:"snapshotID"`

	// Member is the member the snapshot was taken of, the one whose dataset
	// holds it: the member recording it.
	// +required
	Member VolumeHandle `json:"member"`

	// CSIName is the name CreateSnapshot was called with, its idempotency
	// key; empty for the snapshot a volume clone is made from.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	CSIName string `json:"csiName,omitempty"`

	// ForClone is the CSI name of the volume a clone-of-a-volume snapshot was
	// taken for.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	ForClone string `json:"forClone,omitempty"`

	// Root is the handle of the chain the snapshot is of.
	// +required
	Root VolumeHandle `json:"root"`

	// SizeBytes is the size of the volume the snapshot captured.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`

	// CreatedAt is when the snapshot was asked for.
	// +optional
	CreatedAt Timestamp `json:"createdAt,omitempty"`

	// Deleting is set by DeleteSnapshot: the home node destroys it, then the
	// entry goes.
	// +optional
	Deleting bool `json:"deleting,omitempty"`
}

// Volume is one member of a volume handle's chain on this cluster.
//
// The transition rules below sit on the object, not on the status fields: a rule
// on a field does not run when the field is removed, and removing a DRBD port or
// the initialized flag must be refused like changing it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.drbdPort) || (has(self.status) && has(self.status.drbdPort) && self.status.drbdPort == oldSelf.status.drbdPort)",message="drbdPort never changes once set",fieldPath=".status.drbdPort"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.drbdMinor) || (has(self.status) && has(self.status.drbdMinor) && self.status.drbdMinor == oldSelf.status.drbdMinor)",message="drbdMinor never changes once set",fieldPath=".status.drbdMinor"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.initialized) || !oldSelf.status.initialized || (has(self.status) && has(self.status.initialized) && self.status.initialized)",message="initialized never reverts to false",fieldPath=".status.initialized"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.successor) || (has(self.status) && has(self.status.successor) && self.status.successor == oldSelf.status.successor)",message="successor never changes once learned",fieldPath=".status.successor"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.state) || oldSelf.status.state != 'Tombstone' || (has(self.status) && has(self.status.state) && self.status.state == 'Tombstone')",message="a tombstone never becomes active again",fieldPath=".status.state"
// +kubebuilder:printcolumn:name="Root",type=string,JSONPath=`.spec.rootHandle`
// +kubebuilder:printcolumn:name="Gen",type=integer,JSONPath=`.spec.generation`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Size",type=integer,JSONPath=`.spec.sizeBytes`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.volumeMode`
// +kubebuilder:printcolumn:name="Port",type=integer,JSONPath=`.status.drbdPort`,priority=1
// +kubebuilder:printcolumn:name="Minor",type=integer,JSONPath=`.status.drbdMinor`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Volume struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec VolumeSpec `json:"spec"`
	// +optional
	Status VolumeStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// VolumeList is a list of Volumes.
type VolumeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Volume `json:"items"`
}

func init() {
	register(&Volume{}, &VolumeList{})
}
