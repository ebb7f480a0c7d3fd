package hub

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// The cadence at which the hub reads a site's answers again: the work and the
// views live in the site's namespace, and the views refresh on the agent's
// interval, so polling is what bounds how stale a request's status is.
const (
	// RequeueInProgress is the cadence while a request is on its way.
	RequeueInProgress = 15 * time.Second
	// RequeueSettled is the cadence once a request is Online (or Failed:
	// only the site, or a changed request, moves it on).
	RequeueSettled = 2 * time.Minute
)

// siteAnswer is what the hub knows of the requested site.
type siteAnswer int

const (
	// siteReady: a ManagedCluster the hub accepted, free for this request.
	siteReady siteAnswer = iota
	// siteNotFound: no ManagedCluster has the name.
	siteNotFound
	// siteNotAccepted: the hub has not accepted the cluster.
	siteNotAccepted
	// siteTaken: another request's work already deploys the site.
	siteTaken
)

func (s siteAnswer) String() string {
	switch s {
	case siteReady:
		return "Ready"
	case siteNotFound:
		return "NotFound"
	case siteNotAccepted:
		return "NotAccepted"
	case siteTaken:
		return "Taken"
	}
	return fmt.Sprintf("siteAnswer(%d)", int(s))
}

// deploymentObservation is everything one pass read: the site, the request's
// work as the agent reports it, and the views' projections.
type deploymentObservation struct {
	site        siteAnswer
	siteMessage string
	work        *workv1.ManifestWork
	draft       viewed[v1.ClusterDeploymentConfig]
	cluster     viewed[v1.StorageCluster]
	nodes       map[string]viewed[v1.StorageNode] // by Kubernetes node name
}

// deploymentPlan is what one pass writes.
type deploymentPlan struct {
	delivery
	status  v1.StorageSiteDeploymentStatus
	requeue time.Duration
}

// siteNamespaceOf is the request's site namespace, defaulted as the CRD does
// (the API server always stores it; a fake client may not).
func siteNamespaceOf(namespace string) string {
	if namespace == "" {
		return v1.DefaultSiteNamespace
	}
	return namespace
}

// requestRun is the OperatorOps name of the request's discovery.
func requestRun(request *v1.StorageSiteDeployment) (string, error) {
	discovery, err := json.Marshal(request.Spec.Discovery) // map keys sorted: canonical
	if err != nil {
		return "", fmt.Errorf("failed to encode the discovery: %w", err)
	}
	return runName(request.Namespace, request.Name, string(discovery)), nil
}

// planDeployment decides one pass of a StorageSiteDeployment from what the
// pass observed. It does no I/O.
func planDeployment(request *v1.StorageSiteDeployment, obs deploymentObservation) (deploymentPlan, error) {
	run, err := requestRun(request)
	if err != nil {
		return deploymentPlan{}, err
	}
	namespace := siteNamespaceOf(request.Spec.SiteNamespace)
	work := deploymentWorkName(request.Namespace, request.Name)
	plan := deploymentPlan{requeue: RequeueInProgress, status: v1.StorageSiteDeploymentStatus{
		ObservedGeneration: request.Generation, Work: work, Run: run, Phase: v1.StorageSiteDeploymentPending,
	}}
	if obs.site != siteReady {
		plan.status.Work = "" // nothing is delivered
		plan.status.Conditions = []metav1.Condition{siteCondition(obs.site, obs.siteMessage, request.Spec.Site)}
		return plan, nil
	}

	report := manifestStatus(obs.work, "OperatorOps", run, namespace)
	draftName := report.feedback[feedbackDraft]
	discovered, failure := discoveredCondition(report, draftName, obs.draft)
	draft := obs.draft.object
	if obs.draft.state != viewFound || draft == nil || draft.Name != draftName {
		draft = nil
	}

	var patch *draftPatch
	sizingApplied := false
	if discovered.Status == metav1.ConditionTrue && request.Spec.Sizing != nil {
		sizingApplied = draft.Spec.Sizing != nil && equality.Semantic.DeepEqual(*draft.Spec.Sizing, *request.Spec.Sizing)
		patch = &draftPatch{name: draftName, sizing: *request.Spec.Sizing, approve: request.Spec.Approved && sizingApplied}
	}
	plan.workSpec, err = deploymentWorkSpec(namespace, run, request.Spec.Discovery, patch)
	if err != nil {
		return deploymentPlan{}, err
	}
	plan.specHash, err = specHash(plan.workSpec)
	if err != nil {
		return deploymentPlan{}, err
	}
	plan.deliver, plan.syncViews = true, true

	var draftReport manifestReport
	if patch != nil {
		draftReport = manifestStatus(obs.work, "ClusterDeploymentConfig", draftName, namespace)
	}
	approved := approvedCondition(request, draft, discovered, draftReport, sizingApplied)
	ready, deployFailure := readyCondition(draft, obs.cluster)
	if failure == "" {
		failure = deployFailure
	}
	delivered := deliveredCondition(obs.work, plan.specHash, report, draftReport)
	plan.status.Conditions = []metav1.Condition{delivered, discovered, approved, ready}

	plan.status.Draft = projectDraft(draft, sizingApplied)
	plan.status.Cluster, plan.status.ReadyNodeCount = projectCluster(obs.cluster, obs.nodes)
	plan.views = deploymentViews(work, namespace, draftName, draft)
	wasOnline := request.Status.Phase == v1.StorageSiteDeploymentOnline && request.Status.Run == run
	plan.status.Phase = deploymentPhase(failure != "", discovered, draft, ready, wasOnline)
	if request.Status.Run == run {
		plan.status.Phase = forwardOnly(request.Status.Phase, plan.status.Phase)
	}
	if plan.status.Phase == v1.StorageSiteDeploymentFailed {
		plan.status.Reason = failure
	}
	if plan.status.Phase == v1.StorageSiteDeploymentOnline || plan.status.Phase == v1.StorageSiteDeploymentFailed {
		plan.requeue = RequeueSettled
	}
	return plan, nil
}

// specHash identifies a work spec as the hub wrote it. The API server adds
// defaults to a ManifestWork (feedbackScrapeType, the deletion policy's
// fields), so the stored spec is never byte-equal to the written one; the
// hash, kept in an annotation, says whether the work carries what is wanted.
func specHash(spec workv1.ManifestWorkSpec) (string, error) {
	encoded, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("failed to encode the work spec: %w", err)
	}
	return hashOf(16, string(encoded)), nil
}

// siteCondition is the Delivered condition of a request whose site cannot be
// delivered to.
func siteCondition(site siteAnswer, message, name string) metav1.Condition {
	c := metav1.Condition{Type: v1.StorageSiteDeploymentDeliveredCondition, Status: metav1.ConditionFalse}
	switch site {
	case siteNotFound:
		c.Reason, c.Message = v1.StorageSiteDeploymentSiteNotFoundReason, fmt.Sprintf("no ManagedCluster %q: nothing is delivered", name)
	case siteNotAccepted:
		c.Reason, c.Message = v1.StorageSiteDeploymentSiteNotAcceptedReason, fmt.Sprintf("the hub has not accepted the ManagedCluster %q: nothing is delivered", name)
	case siteTaken:
		c.Reason, c.Message = v1.StorageSiteDeploymentSiteTakenReason, message
	default:
		panic(fmt.Sprintf("siteCondition of a site that is %s", site))
	}
	return c
}

// discoveredCondition says whether the run's draft names nodes, and returns
// the site's reason when the discovery failed.
func discoveredCondition(report manifestReport, draftName string, draft viewed[v1.ClusterDeploymentConfig]) (metav1.Condition, string) {
	c := metav1.Condition{Type: v1.StorageSiteDeploymentDiscoveredCondition, Status: metav1.ConditionFalse,
		Reason: v1.StorageSiteDeploymentDiscoveringReason}
	phase := v1.OperatorOpsPhase(report.feedback[feedbackPhase])
	switch {
	case phase == v1.OperatorOpsFailed:
		c.Reason, c.Message = v1.StorageSiteDeploymentDiscoveryFailedReason, report.feedback[feedbackMessage]
		if c.Message == "" {
			c.Message = "the site reports the discovery Failed"
		}
		return c, c.Message
	case !report.reported:
		c.Message = "the discovery is not applied on the site yet"
	case draftName == "":
		c.Message = fmt.Sprintf("the discovery runs on the site (phase %q) and has written no draft yet", phase)
	case draft.state != viewFound || draft.object.Name != draftName:
		c.Message = fmt.Sprintf("waiting for the view of the draft %s (%s) %s", draftName, draft.state, draft.message)
	case phase != v1.OperatorOpsCompleted:
		c.Message = fmt.Sprintf("the discovery is %q", phase)
	case nodeCount(draft.object.Spec.NodeSets) == 0:
		c.Reason, c.Message = v1.StorageSiteDeploymentNoNodesReason, fmt.Sprintf("the draft %s names no node; change the discovery to run again", draftName)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, v1.StorageSiteDeploymentNodesFoundReason
		c.Message = fmt.Sprintf("the draft %s names %d nodes in %d node sets", draftName,
			nodeCount(draft.object.Spec.NodeSets), len(draft.object.Spec.NodeSets))
	}
	return c, ""
}

// approvedCondition says whether the site's draft is approved, and if not,
// what the approval waits for.
func approvedCondition(request *v1.StorageSiteDeployment, draft *v1.ClusterDeploymentConfig,
	discovered metav1.Condition, draftReport manifestReport, sizingApplied bool) metav1.Condition {
	c := metav1.Condition{Type: v1.StorageSiteDeploymentApprovedCondition, Status: metav1.ConditionFalse}
	switch {
	case draft != nil && draft.Spec.Approved:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, v1.StorageSiteDeploymentApprovedReason, fmt.Sprintf("the draft %s is approved", draft.Name)
	case draftReport.reported && !draftReport.applied:
		c.Reason, c.Message = v1.StorageSiteDeploymentSizingRejectedReason, draftReport.message
	case !request.Spec.Approved:
		c.Reason, c.Message = v1.StorageSiteDeploymentAwaitingApprovalReason, "the request is not approved"
	case discovered.Reason == v1.StorageSiteDeploymentNoNodesReason:
		c.Reason, c.Message = v1.StorageSiteDeploymentDraftHasNoNodesReason, "the draft names no node: no approval is delivered"
	case discovered.Status != metav1.ConditionTrue:
		c.Reason, c.Message = v1.StorageSiteDeploymentDiscoveringReason, "the approval waits for a draft that names nodes"
	case !sizingApplied:
		c.Reason, c.Message = v1.StorageSiteDeploymentSizingPendingReason, "the approval waits until the draft shows the requested sizing"
	default:
		c.Reason, c.Message = v1.StorageSiteDeploymentApprovalDeliveringReason, "the approval is delivered; the draft does not show it yet"
	}
	return c
}

// readyCondition says whether the storage cluster is Ready, and returns the
// site's reason when the draft failed to expand.
func readyCondition(draft *v1.ClusterDeploymentConfig, cluster viewed[v1.StorageCluster]) (metav1.Condition, string) {
	c := metav1.Condition{Type: v1.StorageSiteDeploymentReadyCondition, Status: metav1.ConditionFalse}
	switch {
	case draft != nil && draft.Status.Phase == v1.ClusterDeploymentConfigFailed:
		c.Reason, c.Message = v1.StorageSiteDeploymentDeployFailedReason, draft.Status.Reason
		if c.Message == "" {
			c.Message = fmt.Sprintf("the site reports the draft %s Failed", draft.Name)
		}
		return c, c.Message
	case draft == nil || !draft.Spec.Approved:
		c.Reason, c.Message = v1.StorageSiteDeploymentNotDeployedReason, "no approved draft yet"
	case cluster.state != viewFound:
		c.Reason, c.Message = v1.StorageSiteDeploymentDeployingReason, fmt.Sprintf("the storage cluster is not projected yet (%s) %s", cluster.state, cluster.message)
	default:
		ready := meta.FindStatusCondition(cluster.object.Status.Conditions, v1.StorageClusterReadyCondition)
		if ready != nil && ready.Status == metav1.ConditionTrue {
			c.Status, c.Reason, c.Message = metav1.ConditionTrue, v1.StorageSiteDeploymentOnlineReason, fmt.Sprintf("the storage cluster %s is Ready", cluster.object.Name)
			return c, ""
		}
		c.Reason, c.Message = v1.StorageSiteDeploymentDeployingReason, fmt.Sprintf("the storage cluster %s is %q", cluster.object.Name, cluster.object.Status.Phase)
		if ready != nil {
			c.Message += ": " + ready.Message
		}
	}
	return c, ""
}

// deliveredCondition says whether the site applied the work as wanted.
func deliveredCondition(work *workv1.ManifestWork, wantHash string, reports ...manifestReport) metav1.Condition {
	c := metav1.Condition{Type: v1.StorageSiteDeploymentDeliveredCondition, Status: metav1.ConditionFalse,
		Reason: v1.StorageSiteDeploymentDeliveringReason}
	if work == nil || work.Annotations[specHashAnnotation] != wantHash {
		c.Message = "the work is being written"
		return c
	}
	for _, report := range reports {
		if report.reported && !report.applied {
			c.Reason, c.Message = v1.StorageSiteDeploymentApplyFailedReason, report.message
			return c
		}
	}
	if applied, message := workApplied(work); !applied {
		c.Message = "the site has not applied the work yet " + message
		return c
	}
	c.Status, c.Reason, c.Message = metav1.ConditionTrue, v1.StorageSiteDeploymentDeliveredReason, "the site applied the work"
	return c
}

// deploymentPhase is the coarse state, from the conditions' facts. The phase
// only moves forward on a run: a request that was Online on it (wasOnline)
// stays Online when its cluster later loses Ready -- a node down is what the
// Ready condition reports, not a deployment under way again.
func deploymentPhase(failed bool, discovered metav1.Condition, draft *v1.ClusterDeploymentConfig, ready metav1.Condition,
	wasOnline bool) v1.StorageSiteDeploymentPhase {
	approved := draft != nil && draft.Spec.Approved
	switch {
	case failed:
		return v1.StorageSiteDeploymentFailed
	case ready.Status == metav1.ConditionTrue, wasOnline && approved:
		return v1.StorageSiteDeploymentOnline
	case approved:
		return v1.StorageSiteDeploymentDeploying
	case discovered.Status == metav1.ConditionTrue:
		return v1.StorageSiteDeploymentDrafted
	}
	return v1.StorageSiteDeploymentDiscovering
}

// forwardOnly keeps a run's phase from going back. A pass can observe less
// than an earlier one did -- a view the site's agent failed to read this time
// (its API server answered 503) projects no draft -- but what a run reached
// it does not unreach: a lost observation is the conditions' news (they say
// what the pass waits for), not the phase's. Failed is final on a run.
func forwardOnly(recorded, observed v1.StorageSiteDeploymentPhase) v1.StorageSiteDeploymentPhase {
	if recorded.Rank() > observed.Rank() {
		return recorded
	}
	return observed
}

// projectDraft is the draft as the request's status shows it for review.
func projectDraft(draft *v1.ClusterDeploymentConfig, sizingApplied bool) *v1.DraftProjection {
	if draft == nil {
		return nil
	}
	return &v1.DraftProjection{
		Name: draft.Name, NodeSets: draft.Spec.NodeSets, Approved: draft.Spec.Approved,
		SizingApplied: sizingApplied, Phase: draft.Status.Phase,
	}
}

// projectCluster is the storage cluster as the request's status shows it:
// its identity and pool, and the StorageNodes the views found, sorted.
func projectCluster(cluster viewed[v1.StorageCluster], nodes map[string]viewed[v1.StorageNode]) (*v1.DeployedCluster, int32) {
	if cluster.state != viewFound {
		return nil, 0
	}
	projected := &v1.DeployedCluster{
		Name: cluster.object.Name, ClusterID: cluster.object.Spec.ClusterID, Pool: cluster.object.Spec.Pool.Name,
	}
	var ready int32
	for _, node := range nodes {
		if node.state != viewFound {
			continue
		}
		projected.Nodes = append(projected.Nodes, node.object.Spec.NodeName)
		if meta.IsStatusConditionTrue(node.object.Status.Conditions, v1.StorageNodeReadyCondition) {
			ready++
		}
	}
	slices.Sort(projected.Nodes)
	return projected, ready
}

// deploymentViews are the views a request needs: the draft once the run
// named it, the cluster and each of its nodes once the draft is approved.
func deploymentViews(work, namespace, draftName string, draft *v1.ClusterDeploymentConfig) []viewWant {
	if draftName == "" {
		return nil
	}
	views := []viewWant{{name: draftViewName(work), scope: siteScope("ClusterDeploymentConfig", draftResource, draftName, namespace)}}
	if draft == nil || !draft.Spec.Approved {
		return views
	}
	cluster := clusterNameOf(draft)
	if cluster == "" {
		return views
	}
	views = append(views, viewWant{name: clusterViewName(work), scope: siteScope("StorageCluster", storageClusterRes, cluster, namespace)})
	for _, node := range clusterNodes(draft) {
		views = append(views, viewWant{
			name:  nodeViewName(work, node),
			scope: siteScope("StorageNode", storageNodeResource, v1.StorageNodeName(cluster, node), namespace),
		})
	}
	return views
}

// clusterNameOf is the StorageCluster an approved draft expands into: the
// name the site reports, else the one its sizing asks for.
func clusterNameOf(draft *v1.ClusterDeploymentConfig) string {
	if draft.Status.Cluster != nil && draft.Status.Cluster.Name != "" {
		return draft.Status.Cluster.Name
	}
	if draft.Spec.Sizing != nil {
		return draft.Spec.Sizing.ClusterName
	}
	return ""
}

// clusterNodes are the nodes of an approved draft: those the site reports
// for its cluster, else those of its node sets; sorted, each once.
func clusterNodes(draft *v1.ClusterDeploymentConfig) []string {
	var nodes []string
	if draft.Status.Cluster != nil && len(draft.Status.Cluster.Nodes) > 0 {
		nodes = slices.Clone(draft.Status.Cluster.Nodes)
	} else {
		for _, set := range draft.Spec.NodeSets {
			nodes = append(nodes, set.Nodes...)
		}
	}
	slices.Sort(nodes)
	return slices.Compact(nodes)
}

// nodeCount is the number of nodes over a draft's node sets.
func nodeCount(sets []v1.NodeSet) int {
	count := 0
	for _, set := range sets {
		count += len(set.Nodes)
	}
	return count
}
