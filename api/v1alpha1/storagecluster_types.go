package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// StorageCluster condition types and reasons.
const (
	// StorageClusterReadyCondition is true when the cluster serves volumes: it is
	// deployed and at least placeCount of its nodes are ready.
	StorageClusterReadyCondition = "Ready"
	// StorageClusterReadyReason: the cluster serves volumes.
	StorageClusterReadyReason = "Ready"
	// StorageClusterDeployingReason: nodes are still being set up.
	StorageClusterDeployingReason = "Deploying"
	// StorageClusterTooFewNodesReason: fewer ready nodes than placeCount, so a
	// new volume cannot get all its replicas.
	StorageClusterTooFewNodesReason = "TooFewNodes"

	// StorageClusterNodesReadyCondition is true when every StorageNode of the
	// cluster is ready.
	StorageClusterNodesReadyCondition = "NodesReady"
	// StorageClusterNodesReadyReason: every node is ready.
	StorageClusterNodesReadyReason = "NodesReady"
	// StorageClusterNodesNotReadyReason: at least one node is not ready; the
	// message names them.
	StorageClusterNodesNotReadyReason = "NodesNotReady"

	// StorageClusterPeersReachableCondition is true when the storage API of every
	// peer cluster answers.
	StorageClusterPeersReachableCondition = "PeersReachable"
	// StorageClusterPeersReachableReason: every peer answers.
	StorageClusterPeersReachableReason = "PeersReachable"
	// StorageClusterPeerUnreachableReason: at least one peer does not answer.
	StorageClusterPeerUnreachableReason = "PeerUnreachable"
)

// StorageClusterPhase is the coarse state of a cluster, for people; reconcilers
// read the conditions.
// +kubebuilder:validation:Enum=Pending;Deploying;Ready;Degraded;Failed
type StorageClusterPhase string

const (
	StorageClusterPending   StorageClusterPhase = "Pending"
	StorageClusterDeploying StorageClusterPhase = "Deploying"
	StorageClusterReady     StorageClusterPhase = "Ready"
	// StorageClusterDegraded serves volumes with fewer nodes or peers than configured.
	StorageClusterDegraded StorageClusterPhase = "Degraded"
	StorageClusterFailed   StorageClusterPhase = "Failed"
)

// PeerCluster is a storage cluster of another site that this site knows: its
// volumes' handles resolve through it, and replication ships to it.
type PeerCluster struct {
	// ID is the peer cluster's UUID.
	// +required
	ID UUID `json:"id"`

	// Endpoint is the peer's storage API, an https URL.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() == 'https'",message="the endpoint must be an https URL"
	// +required
	Endpoint string `json:"endpoint"`
}

// StorageClusterSpec is the sizing of one site's storage and the peers it knows.
// +kubebuilder:validation:XValidation:rule="!has(self.peers) || self.peers.all(p, p.id != self.clusterID)",message="a cluster is not its own peer",fieldPath=".peers"
type StorageClusterSpec struct {
	// ClusterID is the cluster's UUID, the first half of every volume handle it
	// creates. It never changes: a PersistentVolume keeps its handle for ever.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterID is immutable"
	// +required
	ClusterID UUID `json:"clusterID"`

	StorageLayout `json:",inline"`

	// Peers are the storage clusters of other sites this site knows.
	// +listType=map
	// +listMapKey=id
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Peers []PeerCluster `json:"peers,omitempty"`
}

// StorageClusterStatus is what the operator observed of the cluster.
type StorageClusterStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is the coarse state, for people.
	// +optional
	Phase StorageClusterPhase `json:"phase,omitempty"`

	// NodeCount is the number of StorageNodes of the cluster.
	// +kubebuilder:validation:Minimum=0
	// +optional
	NodeCount int32 `json:"nodeCount,omitempty"`

	// ReadyNodeCount is the number of those that are ready.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ReadyNodeCount int32 `json:"readyNodeCount,omitempty"`

	// Capacity is the sum over the nodes' pools.
	// +optional
	Capacity PoolUsage `json:"capacity,omitzero"`

	// Conditions: Ready, NodesReady, PeersReachable.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StorageCluster is the storage of one site, identified by a UUID.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Cluster ID",type=string,JSONPath=`.spec.clusterID`
// +kubebuilder:printcolumn:name="Backend",type=string,JSONPath=`.spec.pool.backend`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodeCount`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec StorageClusterSpec `json:"spec"`
	// +optional
	Status StorageClusterStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// StorageClusterList is a list of StorageClusters.
type StorageClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageCluster `json:"items"`
}

func init() {
	register(&StorageCluster{}, &StorageClusterList{})
}
