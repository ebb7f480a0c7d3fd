package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// OperatorOps condition types and reasons.
const (
	// OperatorOpsDiscoveredCondition is true when every selected node reported
	// its devices.
	OperatorOpsDiscoveredCondition = "Discovered"
	// OperatorOpsDiscoveredReason: every selected node answered.
	OperatorOpsDiscoveredReason = "Discovered"
	// OperatorOpsDiscoveringReason: nodes are still being asked.
	OperatorOpsDiscoveringReason = "Discovering"
	// OperatorOpsNoNodesReason: the filters select no node.
	OperatorOpsNoNodesReason = "NoNodes"
	// OperatorOpsDiscoveryFailedReason: a node's discovery failed; the message
	// names it.
	OperatorOpsDiscoveryFailedReason = "DiscoveryFailed"

	// OperatorOpsDraftWrittenCondition is true when the run's findings are in a
	// ClusterDeploymentConfig draft.
	OperatorOpsDraftWrittenCondition = "DraftWritten"
	// OperatorOpsDraftWrittenReason: the draft carries this run's node sets.
	OperatorOpsDraftWrittenReason = "DraftWritten"
	// OperatorOpsDraftApprovedReason: the draft was approved before this run
	// could write it; an approved draft is frozen, so the run writes nothing.
	OperatorOpsDraftApprovedReason = "DraftApproved"
)

// OperatorOpsPhase is the state of a discovery run.
// +kubebuilder:validation:Enum=Pending;Running;Completed;Failed
type OperatorOpsPhase string

const (
	OperatorOpsPending   OperatorOpsPhase = "Pending"
	OperatorOpsRunning   OperatorOpsPhase = "Running"
	OperatorOpsCompleted OperatorOpsPhase = "Completed"
	OperatorOpsFailed    OperatorOpsPhase = "Failed"
)

// DeviceFilter selects the devices discovery offers as pool candidates.
type DeviceFilter struct {
	// Paths are glob patterns a device path must match ("/dev/sd*",
	// "/dev/nvme*n1"); empty matches every device.
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=255
	// +optional
	Paths []string `json:"paths,omitempty"`

	// MinSizeBytes leaves out smaller devices.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinSizeBytes int64 `json:"minSizeBytes,omitempty"`

	// AllowLoopFiles offers a loop file on nodes without a candidate disk
	// (the beds, and nodes without spare disks).
	// +optional
	AllowLoopFiles bool `json:"allowLoopFiles,omitempty"`
}

// OperatorOpsSpec is the scope of one discovery run. It is immutable: a changed
// discovery is a new OperatorOps name, a new run, so a run's findings always
// answer the question it was asked.
type OperatorOpsSpec struct {
	// NodeSelector selects nodes by label; empty selects every node.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// NodeNames restricts the run to these nodes; empty means no restriction.
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	// +optional
	NodeNames []string `json:"nodeNames,omitempty"`

	// Devices filters the candidate devices.
	// +optional
	Devices DeviceFilter `json:"devices,omitzero"`
}

// CandidateDevice is a device discovery found usable for a pool.
type CandidateDevice struct {
	// Path is the device's (or the proposed loop file's) absolute path.
	// +kubebuilder:validation:MaxLength=255
	// +required
	Path string `json:"path"`

	// Type says whether Path is a disk or a proposed loop file.
	// +optional
	Type DeviceType `json:"type,omitempty"`

	// SizeBytes is the device's size.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`

	// Model is the device's model as the kernel reports it, for people.
	// +kubebuilder:validation:MaxLength=255
	// +optional
	Model string `json:"model,omitempty"`
}

// DiscoveredNode is one node the run found, with its candidate devices.
type DiscoveredNode struct {
	// Name is the Kubernetes Node's name.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// Address is the node's internal IP address, the proposed DRBD address.
	// +kubebuilder:validation:MaxLength=45
	// +optional
	Address string `json:"address,omitempty"`

	// Devices are the candidate devices, sorted by path.
	// +listType=map
	// +listMapKey=path
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Devices []CandidateDevice `json:"devices,omitempty"`
}

// OperatorOpsStatus is what the run found.
type OperatorOpsStatus struct {
	// Phase is the run's state.
	// +optional
	Phase OperatorOpsPhase `json:"phase,omitempty"`

	// Nodes are the nodes found, sorted by name.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Nodes []DiscoveredNode `json:"nodes,omitempty"`

	// Draft is the name of the ClusterDeploymentConfig this run wrote.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Draft string `json:"draft,omitempty"`

	// Conditions: Discovered, DraftWritten.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// OperatorOps is a discovery run: it asks the selected nodes for their devices
// and writes what it found into a ClusterDeploymentConfig draft.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Draft",type=string,JSONPath=`.status.draft`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type OperatorOps struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="an OperatorOps spec is immutable: a changed discovery is a new OperatorOps (a new run)"
	// +required
	Spec OperatorOpsSpec `json:"spec"`
	// +optional
	Status OperatorOpsStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// OperatorOpsList is a list of OperatorOps.
type OperatorOpsList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OperatorOps `json:"items"`
}

func init() {
	register(&OperatorOps{}, &OperatorOpsList{})
}
