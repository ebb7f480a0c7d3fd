package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// StorageSiteDeployment condition types and reasons. The hub writes them; a
// console reads them to say what the request waits for.
const (
	// StorageSiteDeploymentDeliveredCondition is true when the site's work
	// agent applied the request's ManifestWork as the hub last wrote it.
	StorageSiteDeploymentDeliveredCondition = "Delivered"
	// StorageSiteDeploymentDeliveredReason: the work agent applied every manifest.
	StorageSiteDeploymentDeliveredReason = "Delivered"
	// StorageSiteDeploymentDeliveringReason: the work is written and the site
	// has not applied it yet (or not this generation of it).
	StorageSiteDeploymentDeliveringReason = "Delivering"
	// StorageSiteDeploymentSiteNotFoundReason: no ManagedCluster has the
	// requested name; nothing is delivered.
	StorageSiteDeploymentSiteNotFoundReason = "SiteNotFound"
	// StorageSiteDeploymentSiteNotAcceptedReason: the ManagedCluster exists but
	// the hub has not accepted it, so no work agent reads its namespace.
	StorageSiteDeploymentSiteNotAcceptedReason = "SiteNotAccepted"
	// StorageSiteDeploymentSiteTakenReason: another request already deploys
	// this site's storage; one request per site, so nothing is delivered.
	StorageSiteDeploymentSiteTakenReason = "SiteTaken"
	// StorageSiteDeploymentApplyFailedReason: the work agent could not apply a
	// manifest; the message carries the site's answer.
	StorageSiteDeploymentApplyFailedReason = "ApplyFailed"

	// StorageSiteDeploymentDiscoveredCondition is true when the site's draft
	// names nodes.
	StorageSiteDeploymentDiscoveredCondition = "Discovered"
	// StorageSiteDeploymentNodesFoundReason: the draft names nodes.
	StorageSiteDeploymentNodesFoundReason = "NodesFound"
	// StorageSiteDeploymentDiscoveringReason: the discovery runs or its draft
	// has not been projected back yet.
	StorageSiteDeploymentDiscoveringReason = "Discovering"
	// StorageSiteDeploymentNoNodesReason: the draft names no node (the filters
	// select none); a changed discovery is the way on.
	StorageSiteDeploymentNoNodesReason = "NoNodes"
	// StorageSiteDeploymentDiscoveryFailedReason: the site's discovery failed;
	// the message is the site's.
	StorageSiteDeploymentDiscoveryFailedReason = "DiscoveryFailed"

	// StorageSiteDeploymentApprovedCondition is true when the site's draft is
	// approved.
	StorageSiteDeploymentApprovedCondition = "Approved"
	// StorageSiteDeploymentApprovedReason: the draft on the site is approved.
	StorageSiteDeploymentApprovedReason = "Approved"
	// StorageSiteDeploymentAwaitingApprovalReason: the request is not approved.
	StorageSiteDeploymentAwaitingApprovalReason = "AwaitingApproval"
	// StorageSiteDeploymentApprovalDeliveringReason: the approval is in the
	// work; the draft does not show it yet.
	StorageSiteDeploymentApprovalDeliveringReason = "ApprovalDelivering"
	// StorageSiteDeploymentSizingPendingReason: the approval waits until the
	// draft shows the requested sizing, so what is approved is what was asked.
	StorageSiteDeploymentSizingPendingReason = "SizingPending"
	// StorageSiteDeploymentSizingRejectedReason: the site refused the sizing
	// (or the approval) applied onto its draft; the message is the site's.
	StorageSiteDeploymentSizingRejectedReason = "SizingRejected"
	// StorageSiteDeploymentDraftHasNoNodesReason: the request is approved but
	// the draft names no node, so no approval is delivered.
	StorageSiteDeploymentDraftHasNoNodesReason = "DraftHasNoNodes"

	// StorageSiteDeploymentReadyCondition is true when the site's
	// StorageCluster is Ready.
	StorageSiteDeploymentReadyCondition = "Ready"
	// StorageSiteDeploymentOnlineReason: the storage cluster serves volumes.
	StorageSiteDeploymentOnlineReason = "Online"
	// StorageSiteDeploymentNotDeployedReason: no approved draft yet.
	StorageSiteDeploymentNotDeployedReason = "NotDeployed"
	// StorageSiteDeploymentDeployingReason: the approved draft is expanding.
	StorageSiteDeploymentDeployingReason = "Deploying"
	// StorageSiteDeploymentDeployFailedReason: the site reported the draft
	// Failed; the message (and status.reason) is the site's.
	StorageSiteDeploymentDeployFailedReason = "DeployFailed"
)

// StorageSiteDeploymentPhase is the coarse state of a request, for people.
// +kubebuilder:validation:Enum=Pending;Discovering;Drafted;Deploying;Online;Failed
type StorageSiteDeploymentPhase string

const (
	// StorageSiteDeploymentPending: nothing is delivered yet.
	StorageSiteDeploymentPending StorageSiteDeploymentPhase = "Pending"
	// StorageSiteDeploymentDiscovering: the discovery is delivered and its
	// draft does not name nodes yet.
	StorageSiteDeploymentDiscovering StorageSiteDeploymentPhase = "Discovering"
	// StorageSiteDeploymentDrafted: the draft names nodes and waits for its
	// sizing and approval.
	StorageSiteDeploymentDrafted StorageSiteDeploymentPhase = "Drafted"
	// StorageSiteDeploymentDeploying: the draft is approved and expanding.
	StorageSiteDeploymentDeploying StorageSiteDeploymentPhase = "Deploying"
	// StorageSiteDeploymentOnline: the storage cluster became Ready. It stays
	// Online if the cluster later loses Ready: the Ready condition says so.
	StorageSiteDeploymentOnline StorageSiteDeploymentPhase = "Online"
	// StorageSiteDeploymentFailed: the site reported the discovery or the
	// draft Failed; status.reason is the site's.
	StorageSiteDeploymentFailed StorageSiteDeploymentPhase = "Failed"
)

// storageSiteDeploymentPhaseOrder is the order a run goes through its
// phases. Failed comes last: a run can fail from any phase and stays Failed.
var storageSiteDeploymentPhaseOrder = [...]StorageSiteDeploymentPhase{
	StorageSiteDeploymentPending, StorageSiteDeploymentDiscovering, StorageSiteDeploymentDrafted,
	StorageSiteDeploymentDeploying, StorageSiteDeploymentOnline, StorageSiteDeploymentFailed,
}

// Rank is the phase's place in the order of one run, from 1 for Pending to
// Failed last. The empty phase (a request its reconciler has not written yet)
// and any unknown one rank 0, before Pending. A run's phase only moves to a
// higher rank: the hub keeps it so and the beds check it.
func (p StorageSiteDeploymentPhase) Rank() int {
	for i, phase := range storageSiteDeploymentPhaseOrder {
		if phase == p {
			return i + 1
		}
	}
	return 0
}

// DefaultSiteNamespace is the namespace of a site's operator, where the
// request's objects are created unless the request names another.
const DefaultSiteNamespace = "baton-system"

// StorageNodeName is the name of the StorageNode object a site's operator
// writes for a node of a cluster: the node's own name, as the operator's
// deployment flow names it (a site runs one storage cluster per namespace).
// The hub's views address StorageNodes by it.
func StorageNodeName(_, node string) string { return node }

// StorageSiteDeploymentSpec is a request for one managed site's storage: the
// discovery to run there, the sizing of the draft it writes, and the approval
// that expands the draft into a StorageCluster.
//
// Approval is one-way, and an approved request is frozen like the draft it
// approves: a changed deployment is a new request. Before approval a changed
// discovery is a new run on the site (a new OperatorOps).
// +kubebuilder:validation:XValidation:rule="!self.approved || has(self.sizing)",message="a request without sizing cannot be approved",fieldPath=".approved"
// +kubebuilder:validation:XValidation:rule="!oldSelf.approved || self == oldSelf",message="an approved request is frozen: a changed deployment is a new request"
type StorageSiteDeploymentSpec struct {
	// Site is the ManagedCluster whose storage this request deploys; its
	// namespace on the hub carries the work and the views.
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

	// Discovery is the scope of the site's discovery run. A changed
	// discovery is a new run with a new OperatorOps name.
	// +optional
	Discovery OperatorOpsSpec `json:"discovery,omitzero"`

	// Sizing is applied onto the site's draft once the draft names nodes.
	// +optional
	Sizing *Sizing `json:"sizing,omitempty"`

	// Approved approves the site's draft once it names nodes and shows this
	// sizing. One-way: it can be set, never withdrawn.
	// +kubebuilder:validation:XValidation:rule="self || !oldSelf",message="approval is one-way: approved cannot go back to false"
	// +kubebuilder:default=false
	// +optional
	Approved bool `json:"approved"`
}

// DraftProjection is the site's draft as its view projects it: what a
// reviewer on the hub looks at before approving.
type DraftProjection struct {
	// Name is the ClusterDeploymentConfig's name on the site.
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`

	// NodeSets are the node sets discovery wrote.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	NodeSets []NodeSet `json:"nodeSets,omitempty"`

	// SizingApplied is true when the draft carries the requested sizing. The
	// request's spec holds that sizing, so the projection does not repeat it.
	// +optional
	SizingApplied bool `json:"sizingApplied,omitempty"`

	// Approved is the draft's approval.
	// +optional
	Approved bool `json:"approved,omitempty"`

	// Phase is the draft's phase on the site.
	// +optional
	Phase ClusterDeploymentConfigPhase `json:"phase,omitempty"`
}

// StorageSiteDeploymentStatus is what the hub delivered and what the site's
// views project back.
type StorageSiteDeploymentStatus struct {
	// ObservedGeneration is the spec generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase is the coarse state, for people.
	// +optional
	Phase StorageSiteDeploymentPhase `json:"phase,omitempty"`

	// Reason says why the phase is Failed: the site's own words.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`

	// Work is the ManifestWork (in the site's namespace on the hub) that
	// carries the request.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Work string `json:"work,omitempty"`

	// Run is the name of the OperatorOps of the current discovery.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Run string `json:"run,omitempty"`

	// Draft is the site's draft as last projected.
	// +optional
	Draft *DraftProjection `json:"draft,omitempty"`

	// Cluster is the storage cluster once it is deployed: its UUID and pool
	// are what a StorageClass names, its nodes the StorageNodes seen.
	// +optional
	Cluster *DeployedCluster `json:"cluster,omitempty"`

	// ReadyNodeCount is the number of the cluster's StorageNodes that are Ready.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ReadyNodeCount int32 `json:"readyNodeCount,omitempty"`

	// Conditions: Delivered, Discovered, Approved, Ready.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StorageSiteDeployment is a hub-side request for a managed site's storage
// cluster: one per site. The hub carries it to the site through one
// ManifestWork (discovery, then sizing and approval applied onto the draft) and
// reads the draft, the StorageCluster and its StorageNodes back through
// ManagedClusterViews; it never holds a site kubeconfig. Deleting the request
// orphans what it created on the site: a storage cluster is never torn down by
// withdrawing the request.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=baton
// +kubebuilder:printcolumn:name="Site",type=string,JSONPath=`.spec.site`
// +kubebuilder:printcolumn:name="Approved",type=boolean,JSONPath=`.spec.approved`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Cluster ID",type=string,JSONPath=`.status.cluster.clusterID`
// +kubebuilder:printcolumn:name="Pool",type=string,JSONPath=`.status.cluster.pool`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type StorageSiteDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec StorageSiteDeploymentSpec `json:"spec"`
	// +optional
	Status StorageSiteDeploymentStatus `json:"status,omitzero"`
}

// +kubebuilder:object:root=true

// StorageSiteDeploymentList is a list of StorageSiteDeployments.
type StorageSiteDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []StorageSiteDeployment `json:"items"`
}

func init() {
	register(&StorageSiteDeployment{}, &StorageSiteDeploymentList{})
}
