package site

import (
	"context"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/conditions"
	"github.com/baton-dr/baton/storage/backend"
)

// The deployment flow: an OperatorOps run asks the nodes for their devices and
// writes what it found into a ClusterDeploymentConfig draft named after the
// run; a reviewer (or the hub) sizes the draft and approves it (one-way, by
// CEL); the approved draft expands into a StorageCluster and its StorageNodes.
// A run is done once it completed or failed: a changed discovery is a new
// OperatorOps name, hence a new run and a new draft.

// Labels tying the flow's objects together.
const (
	// RunLabel names, on a draft, the OperatorOps run that wrote it.
	RunLabel = "storage.baton.dev/operatorops"
	// DraftLabel names, on a StorageCluster and its StorageNodes, the draft
	// they were expanded from.
	DraftLabel = "storage.baton.dev/draft"
)

// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=operatorops;clusterdeploymentconfigs,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=storage.baton.dev,namespace=baton-system,resources=operatorops/status;clusterdeploymentconfigs/status,verbs=get;update

// OperatorOpsReconciler carries out discovery runs.
type OperatorOpsReconciler struct {
	Client     client.Client
	Clock      backend.Clock
	Discoverer Discoverer
}

func (r *OperatorOpsReconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var run v1.OperatorOps
	if err := r.Client.Get(ctx, request.NamespacedName, &run); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if run.Status.Phase == v1.OperatorOpsCompleted || run.Status.Phase == v1.OperatorOpsFailed {
		return ctrl.Result{}, nil // a run is answered once; a new question is a new run
	}
	candidates, err := r.Discoverer.Candidates(ctx)
	if err != nil {
		return ctrl.Result{}, r.finish(ctx, &run, v1.OperatorOpsFailed,
			condition(v1.OperatorOpsDiscoveredCondition, false, v1.OperatorOpsDiscoveryFailedReason, err.Error()))
	}
	nodes := discover(run.Spec, candidates)
	if len(nodes) == 0 {
		return ctrl.Result{}, r.finish(ctx, &run, v1.OperatorOpsFailed,
			condition(v1.OperatorOpsDiscoveredCondition, false, v1.OperatorOpsNoNodesReason,
				fmt.Sprintf("no node of %d matches the run's filters with a usable device", len(candidates))))
	}
	approved, err := r.writeDraft(ctx, &run, nodes)
	if err != nil {
		return ctrl.Result{}, err
	}
	run.Status.Nodes, run.Status.Draft = nodes, run.Name
	written := condition(v1.OperatorOpsDraftWrittenCondition, true, v1.OperatorOpsDraftWrittenReason,
		fmt.Sprintf("%d nodes in draft %s", len(nodes), run.Name))
	if approved {
		written = condition(v1.OperatorOpsDraftWrittenCondition, false, v1.OperatorOpsDraftApprovedReason,
			"draft "+run.Name+" was approved before this run wrote it; an approved draft is frozen")
	}
	return ctrl.Result{}, r.finish(ctx, &run, v1.OperatorOpsCompleted,
		condition(v1.OperatorOpsDiscoveredCondition, true, v1.OperatorOpsDiscoveredReason,
			fmt.Sprintf("%d nodes: %s", len(nodes), describeNodes(nodeNames(nodes)))), written)
}

func (r *OperatorOpsReconciler) finish(ctx context.Context, run *v1.OperatorOps, phase v1.OperatorOpsPhase,
	want ...metav1.Condition) error {
	run.Status.Phase = phase
	conditions.Set(&run.Status.Conditions, want, run.Generation, r.Clock.Now())
	return r.Client.Status().Update(ctx, run)
}

// writeDraft creates or refreshes the run's draft; it reports whether the
// draft was approved already (then it is left as it is).
func (r *OperatorOpsReconciler) writeDraft(ctx context.Context, run *v1.OperatorOps, nodes []v1.DiscoveredNode) (bool, error) {
	sets := nodeSets(nodes)
	var draft v1.ClusterDeploymentConfig
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: run.Name}, &draft)
	switch {
	case apierrors.IsNotFound(err):
		draft = v1.ClusterDeploymentConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: run.Namespace, Name: run.Name, Labels: map[string]string{RunLabel: run.Name}},
			Spec:       v1.ClusterDeploymentConfigSpec{NodeSets: sets}}
		return false, r.Client.Create(ctx, &draft)
	case err != nil:
		return false, fmt.Errorf("failed to read draft %s: %w", run.Name, err)
	case draft.Spec.Approved:
		return true, nil
	case equality.Semantic.DeepEqual(draft.Spec.NodeSets, sets):
		return false, nil
	}
	draft.Spec.NodeSets = sets
	return false, r.Client.Update(ctx, &draft)
}

func nodeNames(nodes []v1.DiscoveredNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

func (r *OperatorOpsReconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("operatorops").For(&v1.OperatorOps{}).Complete(r)
}

// DraftReconciler expands approved drafts into a StorageCluster and its
// StorageNodes, and reports each draft's progress.
type DraftReconciler struct {
	Client client.Client
	Clock  backend.Clock
	// Random draws the new cluster's UUID: crypto/rand in production.
	Random io.Reader
}

func (r *DraftReconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	var draft v1.ClusterDeploymentConfig
	if err := r.Client.Get(ctx, request.NamespacedName, &draft); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	switch {
	case !draft.Spec.Approved:
		return ctrl.Result{}, r.report(ctx, &draft, v1.ClusterDeploymentConfigDrafted,
			condition(v1.ClusterDeploymentConfigApprovedCondition, false, v1.ClusterDeploymentConfigAwaitingApprovalReason,
				"the draft waits for its sizing and approval"))
	case draft.Status.Phase == v1.ClusterDeploymentConfigFailed:
		return ctrl.Result{}, nil // an approved draft is frozen: its failure stands, a new draft is the fix
	}
	plan, reason, err := r.plan(ctx, &draft)
	if err != nil {
		return ctrl.Result{}, err
	}
	if reason == "" {
		reason, err = r.expand(ctx, &draft, plan)
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	if reason != "" {
		draft.Status.Reason = reason
		return ctrl.Result{}, r.report(ctx, &draft, v1.ClusterDeploymentConfigFailed,
			condition(v1.ClusterDeploymentConfigDeployedCondition, false, v1.ClusterDeploymentConfigDeployFailedReason, reason))
	}
	return r.progress(ctx, &draft)
}

// report writes a draft's phase and conditions.
func (r *DraftReconciler) report(ctx context.Context, draft *v1.ClusterDeploymentConfig, phase v1.ClusterDeploymentConfigPhase,
	want ...metav1.Condition) error {
	before := draft.Status.DeepCopy()
	draft.Status.Phase, draft.Status.ObservedGeneration = phase, draft.Generation
	if draft.Spec.Approved {
		want = append(want, condition(v1.ClusterDeploymentConfigApprovedCondition, true,
			v1.ClusterDeploymentConfigApprovedReason, "approved"))
	}
	conditions.Set(&draft.Status.Conditions, want, draft.Generation, r.Clock.Now())
	if equality.Semantic.DeepEqual(before, &draft.Status) {
		return nil
	}
	return r.Client.Status().Update(ctx, draft)
}

// progress reports Deploying until the cluster is Ready, then Deployed.
func (r *DraftReconciler) progress(ctx context.Context, draft *v1.ClusterDeploymentConfig) (ctrl.Result, error) {
	var cluster v1.StorageCluster
	key := client.ObjectKey{Namespace: draft.Namespace, Name: draft.Spec.Sizing.ClusterName}
	if err := r.Client.Get(ctx, key, &cluster); err != nil {
		return ctrl.Result{}, err
	}
	if cluster.Status.Phase == v1.StorageClusterReady || cluster.Status.Phase == v1.StorageClusterDegraded {
		return ctrl.Result{}, r.report(ctx, draft, v1.ClusterDeploymentConfigDeployed,
			condition(v1.ClusterDeploymentConfigDeployedCondition, true, v1.ClusterDeploymentConfigDeployedReason,
				fmt.Sprintf("cluster %s serves volumes", cluster.Name)))
	}
	return ctrl.Result{RequeueAfter: statusRequeue}, r.report(ctx, draft, v1.ClusterDeploymentConfigDeploying,
		condition(v1.ClusterDeploymentConfigDeployedCondition, false, v1.ClusterDeploymentConfigDeployingReason,
			fmt.Sprintf("cluster %s: %d of %d nodes ready", cluster.Name, cluster.Status.ReadyNodeCount, len(draft.Status.Cluster.Nodes))))
}

func (r *DraftReconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("clusterdeploymentconfig").For(&v1.ClusterDeploymentConfig{}).
		Watches(&v1.StorageCluster{}, enqueueByLabel(DraftLabel)).Complete(r)
}

// clusterStatus sets a cluster's counts, capacity and phase from its nodes'
// statuses, and returns its Ready and NodesReady conditions.
func clusterStatus(status *v1.StorageClusterStatus, placeCount int32, name string, all []v1.StorageNode) []metav1.Condition {
	status.NodeCount, status.ReadyNodeCount, status.Capacity = 0, 0, v1.PoolUsage{}
	var notReady []string
	for _, n := range all {
		if n.Spec.Cluster != name {
			continue
		}
		status.NodeCount++
		status.Capacity.SizeBytes += n.Status.Pool.SizeBytes
		status.Capacity.AllocatedBytes += n.Status.Pool.AllocatedBytes
		status.Capacity.FreeBytes += n.Status.Pool.FreeBytes
		if conditionTrue(n.Status.Conditions, v1.StorageNodeReadyCondition) {
			status.ReadyNodeCount++
		} else {
			notReady = append(notReady, n.Name)
		}
	}
	slices.Sort(notReady)
	nodesReady := condition(v1.StorageClusterNodesReadyCondition, len(notReady) == 0 && status.NodeCount > 0,
		v1.StorageClusterNodesReadyReason, fmt.Sprintf("%d nodes ready", status.ReadyNodeCount))
	if len(notReady) > 0 || status.NodeCount == 0 {
		nodesReady = condition(v1.StorageClusterNodesReadyCondition, false, v1.StorageClusterNodesNotReadyReason,
			"not ready: "+describeNodes(notReady))
	}
	switch {
	case status.NodeCount == 0:
		status.Phase = v1.StorageClusterPending
	case status.ReadyNodeCount < placeCount:
		status.Phase = v1.StorageClusterDeploying
	case len(notReady) > 0:
		status.Phase = v1.StorageClusterDegraded
	default:
		status.Phase = v1.StorageClusterReady
	}
	ready := condition(v1.StorageClusterReadyCondition, true, v1.StorageClusterReadyReason,
		fmt.Sprintf("%d of %d nodes ready, placeCount %d", status.ReadyNodeCount, status.NodeCount, placeCount))
	if status.ReadyNodeCount < placeCount {
		ready = condition(v1.StorageClusterReadyCondition, false, v1.StorageClusterTooFewNodesReason,
			fmt.Sprintf("%d of %d nodes ready, placeCount %d", status.ReadyNodeCount, status.NodeCount, placeCount))
	}
	return []metav1.Condition{ready, nodesReady}
}

func conditionTrue(conditions []metav1.Condition, conditionType string) bool {
	for _, c := range conditions {
		if c.Type == conditionType {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
