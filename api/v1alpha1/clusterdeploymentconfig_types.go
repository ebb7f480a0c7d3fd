package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ClusterDeploymentConfig condition types and reasons.
const (
	// ClusterDeploymentConfigApprovedCondition is true once spec.approved is.
	ClusterDeploymentConfigApprovedCondition = "Approved"
	// ClusterDeploymentConfigApprovedReason: the draft was approved.
	ClusterDeploymentConfigApprovedReason = "Approved"
	// ClusterDeploymentConfigAwaitingApprovalReason: the draft waits for review.
	ClusterDeploymentConfigAwaitingApprovalReason = "AwaitingApproval"

	// ClusterDeploymentConfigDeployedCondition is true when the StorageCluster
	// and its StorageNodes exist and the cluster is Ready.
	ClusterDeploymentConfigDeployedCondition = "Deployed"
	// ClusterDeploymentConfigDeployedReason: the cluster is Ready.
	ClusterDeploymentConfigDeployedReason = "Deployed"
	// ClusterDeploymentConfigDeployingReason: the cluster is being built.
	ClusterDeploymentConfigDeployingReason = "Deploying"
	// ClusterDeploymentConfigDeployFailedReason: expanding the draft failed;
	// the message (and status.reason) says why.
	ClusterDeploymentConfigDeployFailedReason = "DeployFailed"
)

// ClusterDeploymentConfigPhase is the state of a draft.
// +kubebuilder:validation:Enum=Drafted;Approved;Deploying;Deployed;Failed
type ClusterDeploymentConfigPhase string

const (
	ClusterDeploymentConfigDrafted   ClusterDeploymentConfigPhase = "Drafted"
	ClusterDeploymentConfigApproved  ClusterDeploymentConfigPhase = "Approved"
	ClusterDeploymentConfigDeploying ClusterDeploymentConfigPhase = "Deploying"
	ClusterDeploymentConfigDeployed  ClusterDeploymentConfigPhase = "Deployed"
	ClusterDeploymentConfigFailed    ClusterDeploymentConfigPhase = "Failed"
)

// NodeSet is a group of nodes that share a device layout, as discovery wrote it.
type NodeSet struct {
	// Name identifies the set within the draft.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// Nodes are the Kubernetes Nodes of the set.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=253
	// +required
	Nodes []string `json:"nodes"`

	// Devices are the absolute device paths each node of the set puts in its pool.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^/`
	// +kubebuilder:validation:items:MaxLength=255
	// +optional
	Devices []string `json:"devices,omitempty"`
}

// Sizing is the reviewer's half of a draft: the cluster's name and layout.
type Sizing struct {
	// ClusterName is the name of the StorageCluster the draft expands into.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +required
	ClusterName string `json:"clusterName"`

	StorageLayout `json:",inline"`
}

// ClusterDeploymentConfigSpec is the draft: discovery writes the node sets, a
// reviewer (or the hub) writes the sizing and approves.
//
// Approval is one-way, and an approved draft is frozen: what was approved is
// what gets deployed, so a changed deployment is a new draft.
// +kubebuilder:validation:XValidation:rule="!self.approved || (has(self.nodeSets) && size(self.nodeSets) > 0)",message="a draft without node sets cannot be approved",fieldPath=".approved"
// +kubebuilder:validation:XValidation:rule="!self.approved || has(self.sizing)",message="a draft without sizing cannot be approved",fieldPath=".approved"
// +kubebuilder:validation:XValidation:rule="!oldSelf.approved || self == oldSelf",message="an approved draft is frozen: a changed deployment is a new draft"
type ClusterDeploymentConfigSpec struct {
	// NodeSets are written by discovery.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	NodeSets []NodeSet `json:"nodeSets,omitempty"`

	// Sizing is the cluster's name and layout.
	// +optional
	Sizing *Sizing `json:"sizing,omitempty"`

	// Approved expands the draft into a StorageCluster and its StorageNodes.
	// One-way: it can be set, never withdrawn.
	// +kubebuilder:validation:XValidation:rule="self || !oldSelf",message="approval is one-way: approved cannot go back to false"
	// +kubebuilder:default=false
	// +optional
	Approved bool `json:"approved"`
}

// DeployedCluster is the StorageCluster an approved draft expanded into: what a
// StorageClass names.
type DeployedCluster struct {
	// Name is the StorageCluster's name.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// ClusterID is the cluster's UUID.
	// +optional
	ClusterID UUID `json:"clusterID,omitempty"`

	// Pool is the pool's name on the nodes.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Pool string `json:"pool,omitempty"`

	// Nodes are the cluster's nodes, sorted.
	// +listType=set
	// +kubebuilder:validation:MaxItems=2048
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	Nodes []string `json:"nodes,omitempty"`
}

// ClusterDeploymentConfigStatus is the draft's progress.
type ClusterDeploymentConfigStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is the draft's state.
	// +optional
	Phase ClusterDeploymentConfigPhase `json:"phase,omitempty"`

	// Reason says why the phase is Failed, for people.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`

	// Cluster is the StorageCluster the draft expanded into, once approved.
	// +optional
	Cluster *DeployedCluster `json:"cluster,omitempty"`

	// Conditions: Approved, Deployed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterDeploymentConfig is a draft of a site's storage cluster: discovery
// writes it, a reviewer sizes and approves it, and the approved draft expands
// into a StorageCluster and its StorageNodes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Approved",type=boolean,JSONPath=`.spec.approved`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.status.cluster.name`
// +kubebuilder:printcolumn:name="Cluster ID",type=string,JSONPath=`.status.cluster.clusterID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterDeploymentConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterDeploymentConfigSpec `json:"spec"`
	// +optional
	Status ClusterDeploymentConfigStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// ClusterDeploymentConfigList is a list of ClusterDeploymentConfigs.
type ClusterDeploymentConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterDeploymentConfig `json:"items"`
}

func init() {
	register(&ClusterDeploymentConfig{}, &ClusterDeploymentConfigList{})
}
