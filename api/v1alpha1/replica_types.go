package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Replica condition types and reasons.
const (
	// ReplicaReceivedCondition is true once every receiving node holds a
	// snapshot: the replica can be failed over or drilled with.
	ReplicaReceivedCondition = "Received"
	// ReplicaReceivedReason: every receiving node holds a snapshot.
	ReplicaReceivedReason = "Received"
	// ReplicaWaitingReason: a receiving node holds nothing yet.
	ReplicaWaitingReason = "Waiting"
	// ReplicaClonedReason: the replica was failed over; it receives no more.
	ReplicaClonedReason = "Cloned"
)

// ReplicaSpec names another site's member that this cluster keeps a copy of,
// and the nodes that receive its streams.
type ReplicaSpec struct {
	// Source is the member of the other site whose snapshots arrive here.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a replica's source is immutable"
	// +required
	Source VolumeHandle `json:"source"`

	// RootHandle is the handle of the source's chain root.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="rootHandle is immutable"
	// +required
	RootHandle VolumeHandle `json:"rootHandle"`

	// SourceGeneration is the source's hop index in its chain.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SourceGeneration int32 `json:"sourceGeneration,omitempty"`

	// SizeBytes is the source's size.
	// +kubebuilder:validation:Minimum=1
	// +required
	SizeBytes int64 `json:"sizeBytes"`

	// PlaceCount is the number of nodes a fail-over clone of the replica gets.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +required
	PlaceCount int32 `json:"placeCount"`

	// Provisioning is the source's; empty is thin.
	// +optional
	Provisioning Provisioning `json:"provisioning,omitempty"`

	// FSType is the filesystem the source's consumer asked for; empty
	// expresses no opinion.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	FSType string `json:"fsType,omitempty"`

	// VolumeMode is the source's: a fail-over clone or a drill's bubble
	// carries it (a VM's disk is Block).
	// +kubebuilder:validation:Enum=Filesystem;Block
	// +required
	VolumeMode corev1.PersistentVolumeMode `json:"volumeMode"`

	// Nodes receive every stream, so that identical clones can start DRBD
	// without an initial sync.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	Nodes []string `json:"nodes,omitempty"`

	// OriginGUID is the snapshot a fail-over clone source started from, which
	// this site holds as a snapshot of its own predecessor: what a fail-over
	// clones when the source was lost before it shipped anything.
	// +optional
	OriginGUID string `json:"originGUID,omitempty"`
}

// ReceivedSnapshots is what one receiving node reported holding.
type ReceivedSnapshots struct {
	// Node is the receiving node.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Node string `json:"node"`

	// Snapshots are the snapshots it holds, oldest first.
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Snapshots []SnapshotRef `json:"snapshots,omitempty"`
}

// ReplicaStatus is what the receiving nodes hold.
type ReplicaStatus struct {
	// Received lists, per receiving node, the snapshots it holds.
	// +listType=map
	// +listMapKey=node
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Received []ReceivedSnapshots `json:"received,omitempty"`

	// ClonedInto is the fail-over member cloned from this replica. Once set,
	// no further stream of the superseded source is received.
	// +optional
	ClonedInto VolumeHandle `json:"clonedInto,omitempty"`

	// CreatedAt is when this cluster began to keep the replica.
	// +optional
	CreatedAt Timestamp `json:"createdAt,omitempty"`

	// Conditions: Received.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Replica is this cluster's copy of another site's chain member: the datasets
// its snapshot streams are received into, on each receiving node.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.clonedInto) || (has(self.status) && has(self.status.clonedInto) && self.status.clonedInto == oldSelf.status.clonedInto)",message="clonedInto never changes once set",fieldPath=".status.clonedInto"
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source`
// +kubebuilder:printcolumn:name="Root",type=string,JSONPath=`.spec.rootHandle`
// +kubebuilder:printcolumn:name="Gen",type=integer,JSONPath=`.spec.sourceGeneration`
// +kubebuilder:printcolumn:name="Cloned Into",type=string,JSONPath=`.status.clonedInto`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Replica struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ReplicaSpec `json:"spec"`
	// +optional
	Status ReplicaStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// ReplicaList is a list of Replicas.
type ReplicaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Replica `json:"items"`
}

func init() {
	register(&Replica{}, &ReplicaList{})
}
