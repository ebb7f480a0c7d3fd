package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFailover condition types and reasons.
const (
	// TestFailoverReadyCondition is true when the bubble PV and PVC are bound
	// and can be consumed.
	TestFailoverReadyCondition = "Ready"
	// TestFailoverReadyReason: the bubble is bound.
	TestFailoverReadyReason = "Ready"
	// TestFailoverCloningReason: the replica snapshot is being cloned.
	TestFailoverCloningReason = "Cloning"
	// TestFailoverSourceNotFoundReason: no protected volume matches spec.source.
	TestFailoverSourceNotFoundReason = "SourceNotFound"
	// TestFailoverSnapshotNotFoundReason: the replica holds no such snapshot
	// (or none at all).
	TestFailoverSnapshotNotFoundReason = "SnapshotNotFound"
	// TestFailoverFailedReason: the drill failed; the message says why.
	TestFailoverFailedReason = "Failed"

	// TestFailoverCleanedUpCondition is true once the bubble's clone, PV and
	// PVC are gone (the drill is being deleted).
	TestFailoverCleanedUpCondition = "CleanedUp"
	// TestFailoverCleanedUpReason: nothing of the bubble remains.
	TestFailoverCleanedUpReason = "CleanedUp"
	// TestFailoverCleaningUpReason: the bubble is being removed.
	TestFailoverCleaningUpReason = "CleaningUp"
)

// TestFailoverPhase is the state of a drill.
// +kubebuilder:validation:Enum=Pending;Cloning;Ready;CleaningUp;Failed
type TestFailoverPhase string

const (
	TestFailoverPending    TestFailoverPhase = "Pending"
	TestFailoverCloning    TestFailoverPhase = "Cloning"
	TestFailoverReady      TestFailoverPhase = "Ready"
	TestFailoverCleaningUp TestFailoverPhase = "CleaningUp"
	TestFailoverFailed     TestFailoverPhase = "Failed"
)

// TestFailoverSpec says which protected volume to drill with and where the
// bubble goes.
type TestFailoverSpec struct {
	// Source is the protected volume: its PersistentVolume's name, or its
	// volume handle.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Source string `json:"source"`

	// Snapshot is the replica snapshot to clone; empty takes the newest.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Snapshot string `json:"snapshot,omitempty"`

	// TargetNamespace is where the bubble's PVC is created.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +required
	TargetNamespace string `json:"targetNamespace"`

	// PVCName is the bubble PVC's name.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:MaxLength=253
	// +required
	PVCName string `json:"pvcName"`
}

// TestFailoverStatus is the drill's bubble.
type TestFailoverStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is the drill's state.
	// +optional
	Phase TestFailoverPhase `json:"phase,omitempty"`

	// Snapshot is the replica snapshot the bubble was cloned from.
	// +optional
	Snapshot *SnapshotRef `json:"snapshot,omitempty"`

	// BubbleVolume is the clone's handle.
	// +optional
	BubbleVolume VolumeHandle `json:"bubbleVolume,omitempty"`

	// PVName is the bubble's PersistentVolume.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PVName string `json:"pvName,omitempty"`

	// PVCName is the bubble's PersistentVolumeClaim (in spec.targetNamespace).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	PVCName string `json:"pvcName,omitempty"`

	// SourceVolumeMode is the source PV's volumeMode, recorded so the bubble PV
	// and PVC carry it: a VM's disk is Block, and a bubble defaulted to
	// Filesystem has the kubelet mount a raw guest disk.
	// +kubebuilder:validation:Enum=Filesystem;Block
	// +optional
	SourceVolumeMode corev1.PersistentVolumeMode `json:"sourceVolumeMode,omitempty"`

	// SourceFSType is the source's filesystem type; empty when the source names
	// none (the node plugin then mounts what the clone carries).
	// +kubebuilder:validation:Pattern=`^[a-z0-9]*$`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	SourceFSType string `json:"sourceFsType,omitempty"`

	// Conditions: Ready, CleanedUp.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TestFailover is a disaster-recovery drill on the DR site: it clones the
// replica of a protected volume into a bubble PV and PVC, without disturbing
// replication, and removes them when deleted.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="PVC",type=string,JSONPath=`.status.pvcName`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.status.sourceVolumeMode`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TestFailover struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec TestFailoverSpec `json:"spec"`
	// +optional
	Status TestFailoverStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// TestFailoverList is a list of TestFailovers.
type TestFailoverList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TestFailover `json:"items"`
}

func init() {
	register(&TestFailover{}, &TestFailoverList{})
}
