package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SiteTestFailover condition types and reasons.
const (
	// SiteTestFailoverDeliveredCondition is true when the DR site's work agent
	// applied the drill's ManifestWork.
	SiteTestFailoverDeliveredCondition = "Delivered"
	// SiteTestFailoverReadyCondition mirrors the site TestFailover's Ready.
	SiteTestFailoverReadyCondition = "Ready"
	// SiteTestFailoverProjectingReason: the drill is delivered and its view
	// has not shown the site's TestFailover yet.
	SiteTestFailoverProjectingReason = "Projecting"
)

// SiteTestFailoverSpec names the DR site and the drill to run there.
type SiteTestFailoverSpec struct {
	// Site is the ManagedCluster of the DR site that holds the replica.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="site is immutable: another site is another request"
	// +required
	Site string `json:"site"`

	// SiteNamespace is the site operator's namespace on the managed cluster.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="siteNamespace is immutable"
	// +kubebuilder:default=baton-system
	// +optional
	SiteNamespace string `json:"siteNamespace,omitempty"`

	// Drill is the TestFailover created on the site.
	// +required
	Drill TestFailoverSpec `json:"drill"`
}

// SiteTestFailoverStatus is the drill as the site reports it.
type SiteTestFailoverStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Work is the ManifestWork (in the site's namespace on the hub) that
	// carries the drill.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Work string `json:"work,omitempty"`

	// Drill is the site TestFailover's status as its view projects it.
	// +optional
	Drill TestFailoverStatus `json:"drill,omitzero"`

	// Conditions: Delivered, Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SiteTestFailover is a disaster-recovery drill requested from the hub: the
// hub delivers a TestFailover to the DR site through a ManifestWork and reads
// it back through a ManagedClusterView. Unlike a StorageSiteDeployment,
// deleting it deletes the site's TestFailover, whose own cleanup removes the
// bubble: a drill is meant to go away.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Site",type=string,JSONPath=`.spec.site`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.drill.source`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.drill.phase`
// +kubebuilder:printcolumn:name="PVC",type=string,JSONPath=`.status.drill.pvcName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SiteTestFailover struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec SiteTestFailoverSpec `json:"spec"`
	// +optional
	Status SiteTestFailoverStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// SiteTestFailoverList is a list of SiteTestFailovers.
type SiteTestFailoverList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SiteTestFailover `json:"items"`
}

func init() {
	register(&SiteTestFailover{}, &SiteTestFailoverList{})
}
