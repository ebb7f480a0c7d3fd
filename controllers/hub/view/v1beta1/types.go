package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ConditionViewProcessing is the one condition the view agent writes: True
// with ReasonGetResource when it read the object, False with another reason
// when it could not.
const ConditionViewProcessing = "Processing"

// The reasons of the Processing condition, as the view agent writes them.
const (
	// ReasonGetResource: the object was read; status.result holds it.
	ReasonGetResource = "GetResourceProcessing"
	// ReasonGetResourceFailed: the read failed, a missing object included
	// (the message carries the API server's "not found").
	ReasonGetResourceFailed = "GetResourceFailed"
	// ReasonResourceNameInvalid: the scope names no object.
	ReasonResourceNameInvalid = "ResourceNameInvalid"
	// ReasonResourceTypeInvalid: the scope's kind may not be viewed.
	ReasonResourceTypeInvalid = "ResourceTypeInvalid"
	// ReasonResourceGVKInvalid: the scope's group, version and kind do not
	// resolve on the managed cluster.
	ReasonResourceGVKInvalid = "ResourceGVKInvalid"
)

// ViewScope names the one object a view projects.
type ViewScope struct {
	// Group is the object's API group; empty for the core group.
	// +optional
	Group string `json:"apiGroup,omitempty"`
	// Version is the object's API version.
	// +optional
	Version string `json:"version,omitempty"`
	// Kind is the object's kind.
	// +optional
	Kind string `json:"kind,omitempty"`
	// Resource is the object's resource (plural), an alternative to Kind.
	// +optional
	Resource string `json:"resource,omitempty"`
	// Name is the object's name.
	// +optional
	Name string `json:"name,omitempty"`
	// Namespace is the object's namespace; empty for a cluster-scoped object.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// UpdateIntervalSeconds is how often the agent reads the object again
	// (the agent's default is 30).
	// +optional
	UpdateIntervalSeconds int32 `json:"updateIntervalSeconds,omitempty"`
}

// ViewSpec is what a view projects.
type ViewSpec struct {
	// Scope names the object.
	// +optional
	Scope ViewScope `json:"scope,omitempty"`
}

// ViewStatus is the projection.
type ViewStatus struct {
	// Conditions: Processing.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Result is the object as the agent last read it.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +nullable
	// +optional
	Result runtime.RawExtension `json:"result,omitempty"`
}

// ManagedClusterView projects one object of a managed cluster into its
// namespace on the hub.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type ManagedClusterView struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ViewSpec `json:"spec,omitempty"`
	// +optional
	Status ViewStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ManagedClusterViewList is a list of ManagedClusterViews.
type ManagedClusterViewList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ManagedClusterView `json:"items"`
}
