package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// StorageNode condition types and reasons.
const (
	// StorageNodeReadyCondition is true when the node's agent answers and its
	// pool is imported: the node can hold replicas.
	StorageNodeReadyCondition = "Ready"
	// StorageNodeReadyReason: the node can hold replicas.
	StorageNodeReadyReason = "Ready"
	// StorageNodeNotReadyReason: see the other conditions.
	StorageNodeNotReadyReason = "NotReady"

	// StorageNodeReachableCondition is true when the node's agent answered the
	// latest probe.
	StorageNodeReachableCondition = "Reachable"
	// StorageNodeReachableReason: the agent answered.
	StorageNodeReachableReason = "Reachable"
	// StorageNodeUnreachableReason: the agent did not answer.
	StorageNodeUnreachableReason = "Unreachable"

	// StorageNodePoolReadyCondition is true when the node's pool exists on its
	// devices and is healthy.
	StorageNodePoolReadyCondition = "PoolReady"
	// StorageNodePoolReadyReason: the pool is imported and healthy.
	StorageNodePoolReadyReason = "PoolReady"
	// StorageNodePoolCreatingReason: the pool is being created on the devices.
	StorageNodePoolCreatingReason = "PoolCreating"
	// StorageNodePoolMissingReason: a device or the pool is gone.
	StorageNodePoolMissingReason = "PoolMissing"

	// StorageNodeResourcesAdoptedCondition is true when every DRBD resource
	// running on the node is accounted for by a Volume: adopted with its live
	// port, minor and metadata, never re-created.
	StorageNodeResourcesAdoptedCondition = "ResourcesAdopted"
	// StorageNodeResourcesAdoptedReason: every running resource is adopted.
	StorageNodeResourcesAdoptedReason = "ResourcesAdopted"
	// StorageNodeUnknownResourceReason: a resource runs that no Volume claims;
	// it is left alone and reported, never torn down.
	StorageNodeUnknownResourceReason = "UnknownResource"
)

// NodeRole is what a node does for its site's storage.
// +kubebuilder:validation:Enum=Storage;Diskless
type NodeRole string

const (
	// NodeRoleStorage nodes carry a pool and hold replicas.
	NodeRoleStorage NodeRole = "Storage"
	// NodeRoleDiskless nodes attach volumes over DRBD without a local replica.
	NodeRoleDiskless NodeRole = "Diskless"
)

// DeviceType says what backs a pool device.
// +kubebuilder:validation:Enum=Disk;LoopFile
type DeviceType string

const (
	// DeviceTypeDisk is a block device the node has (/dev/sdb).
	DeviceTypeDisk DeviceType = "Disk"
	// DeviceTypeLoopFile is a file the agent creates and attaches as a loop
	// device: the beds, and nodes without spare disks.
	DeviceTypeLoopFile DeviceType = "LoopFile"
)

// PoolDevice is one device of a node's pool.
// +kubebuilder:validation:XValidation:rule="!has(self.type) || self.type != 'LoopFile' || has(self.sizeBytes)",message="a loop file needs sizeBytes",fieldPath=".sizeBytes"
type PoolDevice struct {
	// Path is the device's absolute path, or the loop file's.
	// +kubebuilder:validation:Pattern=`^/`
	// +kubebuilder:validation:MaxLength=255
	// +required
	Path string `json:"path"`

	// Type says whether Path is a disk or a loop file.
	// +kubebuilder:default=Disk
	// +optional
	Type DeviceType `json:"type,omitempty"`

	// SizeBytes is the size of a loop file to create; ignored for a disk.
	// +kubebuilder:validation:Minimum=1
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`
}

// StorageNodeSpec names one node of a cluster and its pool devices.
type StorageNodeSpec struct {
	// Cluster is the name of the StorageCluster (in this namespace) the node
	// belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Cluster string `json:"cluster"`

	// NodeName is the Kubernetes Node the storage lives on.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	NodeName string `json:"nodeName"`

	// Devices make up the node's pool. Empty for a diskless node.
	// +listType=map
	// +listMapKey=path
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Devices []PoolDevice `json:"devices,omitempty"`

	// Address is the IP address DRBD listens on and peers connect to.
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="address must be an IP address"
	// +required
	Address string `json:"address"`

	// Provisioning is the node's pool's: a thick pool reserves each volume's
	// size, a thin one does not. Empty is thin.
	// +optional
	Provisioning Provisioning `json:"provisioning,omitempty"`

	// Unschedulable keeps new replicas off the node (a cordon); the replicas
	// it holds stay.
	// +optional
	Unschedulable bool `json:"unschedulable,omitempty"`
}

// NodeResource is one DRBD resource running on the node as the kernel reports
// it. Adoption reads ports and minors from here: LINSTOR-style custom resources
// may not record them, the kernel always does.
type NodeResource struct {
	// Name is the DRBD resource name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	// +required
	Name string `json:"name"`

	// Volume is the member the resource belongs to; empty when no Volume claims it.
	// +optional
	Volume VolumeHandle `json:"volume,omitempty"`

	// DRBDPort is the resource's TCP port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	DRBDPort *int32 `json:"drbdPort,omitempty"`

	// DRBDMinor is the resource's device minor.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1048575
	// +optional
	DRBDMinor *int32 `json:"drbdMinor,omitempty"`

	// NodeID is this node's DRBD node-id in the resource.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=15
	// +optional
	NodeID *int32 `json:"nodeID,omitempty"`

	// DiskState is the local disk's state.
	// +optional
	DiskState DiskState `json:"diskState,omitempty"`
}

// StorageNodeStatus is what the node's agent reported.
type StorageNodeStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Role is what the node does for the site's storage.
	// +optional
	Role NodeRole `json:"role,omitempty"`

	// Pool is the node's pool usage.
	// +optional
	Pool PoolUsage `json:"pool,omitzero"`

	// Reachable is true when the node's agent answered the latest probe.
	// +optional
	Reachable bool `json:"reachable,omitempty"`

	// Resources are the DRBD resources running on the node, sorted by name.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=4096
	// +optional
	Resources []NodeResource `json:"resources,omitempty"`

	// Conditions: Ready, Reachable, PoolReady, ResourcesAdopted.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AgentAddress is where the node's agent accepts replication streams
	// (host:port), as the agent reported it.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	AgentAddress string `json:"agentAddress,omitempty"`

	// ReportedAt is when the node's agent last reported.
	// +optional
	ReportedAt Timestamp `json:"reportedAt,omitempty"`

	// Fenced is true while the Kubernetes Node carries the
	// node.kubernetes.io/out-of-service taint: the node is known to be down,
	// so a replica on another node may be promoted without it.
	// +optional
	Fenced bool `json:"fenced,omitempty"`
}

// StorageNode is one storage node of a site's cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.spec.nodeName`
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.spec.address`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.status.role`
// +kubebuilder:printcolumn:name="Reachable",type=boolean,JSONPath=`.status.reachable`
// +kubebuilder:printcolumn:name="Free",type=integer,JSONPath=`.status.pool.freeBytes`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec StorageNodeSpec `json:"spec"`
	// +optional
	Status StorageNodeStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// StorageNodeList is a list of StorageNodes.
type StorageNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageNode `json:"items"`
}

func init() {
	register(&StorageNode{}, &StorageNodeList{})
}
