package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Snapshot condition types and reasons.
const (
	// SnapshotReadyCondition is true when the snapshot exists in the pool and
	// can be cloned or shipped.
	SnapshotReadyCondition = "Ready"
	// SnapshotReadyReason: the snapshot can be used.
	SnapshotReadyReason = "Ready"
	// SnapshotCreatingReason: the snapshot is being taken.
	SnapshotCreatingReason = "Creating"
	// SnapshotReceivingReason: the snapshot is arriving from the peer site.
	SnapshotReceivingReason = "Receiving"
	// SnapshotFailedReason: taking or receiving it failed; the message says why.
	SnapshotFailedReason = "Failed"
)

// SnapshotSpec names a snapshot of one member. A snapshot is what it was taken
// as: the spec is immutable.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a Snapshot's spec is immutable"
type SnapshotSpec struct {
	// Volume is the member the snapshot belongs to.
	// +required
	Volume VolumeHandle `json:"volume"`

	// SnapshotName is the snapshot's name on the volume in the pool.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	SnapshotName string `json:"snapshotName"`
}

// SnapshotStatus is what the pool reported of the snapshot.
type SnapshotStatus struct {
	// GUID identifies the snapshot's content across pools.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	GUID string `json:"guid,omitempty"`

	// CreatedAt is when the snapshot was taken on the source.
	// +optional
	CreatedAt *metav1.Time `json:"createdAt,omitempty"`

	// SizeBytes is the size of the volume the snapshot captured.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`

	// ReadyToUse is true once the snapshot can be cloned or shipped.
	// +optional
	ReadyToUse bool `json:"readyToUse,omitempty"`

	// Conditions: Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Snapshot is a snapshot of a Volume.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Volume",type=string,JSONPath=`.spec.volume`
// +kubebuilder:printcolumn:name="Snapshot",type=string,JSONPath=`.spec.snapshotName`
// +kubebuilder:printcolumn:name="Ready",type=boolean,JSONPath=`.status.readyToUse`
// +kubebuilder:printcolumn:name="Created",type=date,JSONPath=`.status.createdAt`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Snapshot struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SnapshotSpec `json:"spec"`
	// +optional
	Status SnapshotStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// SnapshotList is a list of Snapshots.
type SnapshotList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Snapshot `json:"items"`
}

func init() {
	register(&Snapshot{}, &SnapshotList{})
}
