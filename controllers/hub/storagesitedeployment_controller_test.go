package hub

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// The seed's seven tests (a StorageSiteDeployment carried to its site and
// back) and the bad-input cases, on controller-runtime's fake client with the
// fake site standing in for the agents and the site operator.

var threeNodes = v1.NodeSet{Name: "storage", Nodes: []string{"node-1", "node-2", "node-3"}, Devices: []string{"/dev/sdb"}}

func sizingFor(cluster string) *v1.Sizing {
	return &v1.Sizing{ClusterName: cluster, StorageLayout: v1.StorageLayout{
		Pool:       v1.PoolLayout{Name: "baton", Provisioning: v1.ProvisioningThin, Backend: v1.BackendZFSDRBD},
		PlaceCount: 2, DRBDPorts: v1.PortRange{Min: 7000, Max: 7999}, DRBDMinors: v1.MinorRange{Min: 1000, Max: 49999},
		ReplicationInterval: metav1.Duration{Duration: 5 * time.Minute}, SnapshotRetention: 3,
	}}
}

func newRequest(name, site string, approved bool) *v1.StorageSiteDeployment {
	return &v1.StorageSiteDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: hubNS},
		Spec: v1.StorageSiteDeploymentSpec{
			Site: site, SiteNamespace: siteNS,
			Discovery: v1.OperatorOpsSpec{NodeSelector: map[string]string{"storage.baton.dev/candidate": "true"},
				Devices: v1.DeviceFilter{Paths: []string{"/dev/sd*"}}},
			Sizing:   sizingFor(site),
			Approved: approved,
		},
	}
}

// deployment is one request under test on a fake hub and site.
type deployment struct {
	t       *testing.T
	hub     client.Client
	site    *fakeSite
	r       *StorageSiteDeploymentReconciler
	request *v1.StorageSiteDeployment
	result  ctrl.Result
}

func newDeployment(t *testing.T, request *v1.StorageSiteDeployment, sites ...string) *deployment {
	t.Helper()
	hub := newHub(t, sites...)
	if err := hub.Create(context.Background(), request); err != nil {
		t.Fatal(err)
	}
	return &deployment{t: t, hub: hub, site: newFakeSite(t, hub, request.Spec.Site),
		r: &StorageSiteDeploymentReconciler{Client: hub}, request: request}
}

// discoveredDeployment is a request for site-a (approved or not) past its
// first pass, whose discovery run has completed on the site with the draft
// site-a-draft of three nodes.
func discoveredDeployment(t *testing.T, approved bool) *deployment {
	t.Helper()
	d := newDeployment(t, newRequest("site-a", siteA, approved), siteA)
	d.round()
	d.site.completeRun(d.request.Status.Run, "site-a-draft", threeNodes)
	return d
}

// reconcile runs one pass and reads the request back.
func (d *deployment) reconcile() {
	d.t.Helper()
	var err error
	d.result, err = d.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(d.request)})
	if err != nil {
		d.t.Fatalf("reconcile: %v", err)
	}
	got := &v1.StorageSiteDeployment{}
	if err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(d.request), got); err != nil {
		if apierrors.IsNotFound(err) {
			d.request.Finalizers = nil
			return
		}
		d.t.Fatal(err)
	}
	d.request = got
}

// round is one exchange: the hub writes, the site answers, the hub reads.
func (d *deployment) round() {
	d.t.Helper()
	d.reconcile()
	d.site.sync()
	d.reconcile()
}

func (d *deployment) work() *workv1.ManifestWork {
	d.t.Helper()
	work, err := getWork(context.Background(), d.hub, d.request.Spec.Site, deploymentWorkName(d.request.Namespace, d.request.Name))
	if err != nil {
		d.t.Fatal(err)
	}
	return work
}

func (d *deployment) views() []viewv1beta1.ManagedClusterView {
	d.t.Helper()
	return listIn[viewv1beta1.ManagedClusterViewList](context.Background(), d.t, d.hub, d.request.Spec.Site).Items
}

// manifests decodes the work's manifests.
func (d *deployment) manifests() []map[string]any {
	d.t.Helper()
	work := d.work()
	if work == nil {
		return nil
	}
	var out []map[string]any
	for _, m := range work.Spec.Workload.Manifests {
		var object map[string]any
		decode(d.t, m.Raw, &object)
		out = append(out, object)
	}
	return out
}

func (d *deployment) expectPhase(want v1.StorageSiteDeploymentPhase) {
	d.t.Helper()
	if got := d.request.Status.Phase; got != want {
		d.t.Fatalf("phase %q, want %q; conditions %s", got, want, conditionSummary(d.request.Status.Conditions))
	}
}

func (d *deployment) expectCondition(conditionType string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	d.t.Helper()
	c := meta.FindStatusCondition(d.request.Status.Conditions, conditionType)
	if c == nil || c.Status != status || c.Reason != reason {
		d.t.Fatalf("condition %s = %+v, want %s/%s; all: %s", conditionType, c, status, reason, conditionSummary(d.request.Status.Conditions))
	}
	return c
}

func conditionSummary(conditions []metav1.Condition) string {
	var parts []string
	for _, c := range conditions {
		parts = append(parts, c.Type+"="+string(c.Status)+"/"+c.Reason+" ("+c.Message+")")
	}
	return strings.Join(parts, "; ")
}

func kindOf(object map[string]any) string { return object["kind"].(string) }

func TestDiscoveryDeliveredAloneBeforeTheDraftExistsAndTheWorkOrphans(t *testing.T) {
	d := newDeployment(t, newRequest("site-a", siteA, true), siteA)
	d.reconcile()

	work := d.work()
	if work == nil {
		t.Fatal("no ManifestWork in the site's namespace")
	}
	if got := work.Spec.DeleteOption; got == nil || got.PropagationPolicy != workv1.DeletePropagationPolicyTypeOrphan {
		t.Errorf("deleteOption %+v, want Orphan: withdrawing a request never tears storage down", got)
	}
	manifests := d.manifests()
	if len(manifests) != 1 || kindOf(manifests[0]) != "OperatorOps" {
		t.Fatalf("the work carries %v, want the OperatorOps alone", manifests)
	}
	ops := &v1.OperatorOps{}
	decode(t, work.Spec.Workload.Manifests[0].Raw, ops)
	if ops.Namespace != siteNS || ops.Name != d.request.Status.Run {
		t.Errorf("OperatorOps %s/%s, want %s/%s", ops.Namespace, ops.Name, siteNS, d.request.Status.Run)
	}
	if ops.Spec.NodeSelector["storage.baton.dev/candidate"] != "true" || ops.Spec.Devices.Paths[0] != "/dev/sd*" {
		t.Errorf("the OperatorOps carries %+v, want the request's discovery", ops.Spec)
	}
	if _, ok := manifests[0]["status"]; ok {
		t.Error("the OperatorOps manifest carries a status")
	}
	if len(d.views()) != 0 {
		t.Errorf("views %v before the discovery named a draft", d.views())
	}
	if !strings.Contains(strings.Join(d.request.Finalizers, ","), DeploymentFinalizer) {
		t.Errorf("finalizers %v, want %s", d.request.Finalizers, DeploymentFinalizer)
	}
	d.expectPhase(v1.StorageSiteDeploymentDiscovering)
	d.expectCondition(v1.StorageSiteDeploymentDeliveredCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentDeliveringReason)

	d.site.sync() // the agent applies; the discovery runs and has no draft yet
	d.reconcile()
	d.expectCondition(v1.StorageSiteDeploymentDeliveredCondition, metav1.ConditionTrue, v1.StorageSiteDeploymentDeliveredReason)
	d.expectCondition(v1.StorageSiteDeploymentDiscoveredCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveringReason)
	d.expectCondition(v1.StorageSiteDeploymentApprovedCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveringReason)
	if n := len(d.manifests()); n != 1 {
		t.Errorf("%d manifests while the discovery runs, want 1 (an approved request delivers nothing else yet)", n)
	}
	if d.result.RequeueAfter != RequeueInProgress {
		t.Errorf("requeue after %s in progress, want %s", d.result.RequeueAfter, RequeueInProgress)
	}
}

func TestSizingAppliedOnceTheDraftNamesNodesWithoutTouchingNodeSets(t *testing.T) {
	d := discoveredDeployment(t, false)
	d.round() // the run's feedback names the draft: its view is created
	d.round() // the view answers: the sizing goes out

	d.expectPhase(v1.StorageSiteDeploymentDrafted)
	d.expectCondition(v1.StorageSiteDeploymentDiscoveredCondition, metav1.ConditionTrue, v1.StorageSiteDeploymentNodesFoundReason)
	manifests := d.manifests()
	if len(manifests) != 2 || kindOf(manifests[1]) != "ClusterDeploymentConfig" {
		t.Fatalf("the work carries %d manifests, want the run and the draft patch", len(manifests))
	}
	spec := manifests[1]["spec"].(map[string]any)
	if _, ok := spec["nodeSets"]; ok {
		t.Errorf("the draft patch carries nodeSets %v: they are discovery's", spec["nodeSets"])
	}
	if _, ok := spec["approved"]; ok {
		t.Errorf("the draft patch of an unapproved request carries approved: %v", spec["approved"])
	}
	if sizing := spec["sizing"].(map[string]any); sizing["clusterName"] != siteA {
		t.Errorf("the draft patch's sizing is %v", sizing)
	}
	config := d.work().Spec.ManifestConfigs[1]
	if config.ResourceIdentifier.Resource != draftResource || config.ResourceIdentifier.Name != "site-a-draft" ||
		config.UpdateStrategy == nil || config.UpdateStrategy.Type != workv1.UpdateStrategyTypeServerSideApply ||
		config.UpdateStrategy.ServerSideApply.FieldManager != FieldManager || config.UpdateStrategy.ServerSideApply.Force {
		t.Errorf("the draft's manifest config is %+v, want a server-side apply as %s without force", config, FieldManager)
	}
	if !strings.HasPrefix(FieldManager, workv1.DefaultFieldManager) {
		t.Errorf("the field manager %q does not start with %q, which OCM requires", FieldManager, workv1.DefaultFieldManager)
	}

	d.site.sync()
	draft := d.site.drafts["site-a-draft"]
	if len(draft.Spec.NodeSets) != 1 || len(draft.Spec.NodeSets[0].Nodes) != 3 || *draft.Spec.Sizing != *sizingFor(siteA) {
		t.Errorf("the site's draft after the apply: %+v", draft.Spec)
	}
	d.reconcile()
	if d.request.Status.Draft == nil || !d.request.Status.Draft.SizingApplied || len(d.request.Status.Draft.NodeSets) != 1 {
		t.Errorf("the projected draft %+v, want the node sets for review and the sizing applied", d.request.Status.Draft)
	}
	d.expectCondition(v1.StorageSiteDeploymentApprovedCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentAwaitingApprovalReason)
}

func TestApprovalDeliveredThenDeployingThenOnline(t *testing.T) {
	d := discoveredDeployment(t, true)
	d.round() // the run's feedback names the draft: its view is created
	d.round() // the view answers: the sizing goes out
	if spec := d.manifests()[1]["spec"].(map[string]any); spec["approved"] != nil {
		t.Fatalf("the approval went out before the draft showed the sizing: %v", spec)
	}
	d.expectCondition(v1.StorageSiteDeploymentApprovedCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentSizingPendingReason)

	d.round() // the sizing lands; the approval goes out
	if spec := d.manifests()[1]["spec"].(map[string]any); spec["approved"] != true {
		t.Fatalf("no approval in the draft patch once the sizing landed: %v", spec)
	}
	if ssa := d.work().Spec.ManifestConfigs[1].UpdateStrategy.ServerSideApply; !ssa.Force {
		t.Errorf("the approval is applied without force: the site operator owns approved=false and it would conflict")
	}
	d.expectCondition(v1.StorageSiteDeploymentApprovedCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentApprovalDeliveringReason)

	d.round() // the site approves
	d.expectPhase(v1.StorageSiteDeploymentDeploying)
	d.expectCondition(v1.StorageSiteDeploymentApprovedCondition, metav1.ConditionTrue, v1.StorageSiteDeploymentApprovedReason)
	d.expectCondition(v1.StorageSiteDeploymentReadyCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentDeployingReason)

	d.site.expand("site-a-draft")
	d.round() // the cluster and node views (created with Deploying) answer
	d.expectPhase(v1.StorageSiteDeploymentOnline)
	d.expectCondition(v1.StorageSiteDeploymentReadyCondition, metav1.ConditionTrue, v1.StorageSiteDeploymentOnlineReason)
	cluster := d.request.Status.Cluster
	if cluster == nil || cluster.ClusterID != clusterID || cluster.Pool != "baton" || cluster.Name != siteA ||
		strings.Join(cluster.Nodes, ",") != "node-1,node-2,node-3" || d.request.Status.ReadyNodeCount != 3 {
		t.Errorf("status.cluster %+v (ready %d), want uuid %s, pool baton and three ready nodes", cluster, d.request.Status.ReadyNodeCount, clusterID)
	}
	if d.result.RequeueAfter != RequeueSettled {
		t.Errorf("requeue after %s once Online, want %s", d.result.RequeueAfter, RequeueSettled)
	}
	if n := len(d.views()); n != 5 {
		t.Errorf("%d views, want 5: the draft, the cluster and three nodes", n)
	}
}

// TestOnlineStaysOnlineWhenTheClusterLosesReady: a deployed cluster that
// loses a node below its placeCount is no deployment under way again. The
// simulation found the request going Online -> Deploying after a node crash
// (bed/sim's phase invariant); the phase stays Online, the Ready condition
// and the ready count say what the site says.
func TestOnlineStaysOnlineWhenTheClusterLosesReady(t *testing.T) {
	d := discoveredDeployment(t, true)
	for range 4 {
		d.round() // the draft's view, the sizing, the approval, the site approves
	}
	d.site.expand("site-a-draft")
	d.round()
	d.expectPhase(v1.StorageSiteDeploymentOnline)

	cluster, node := d.site.clusters[siteA], d.site.nodes[v1.StorageNodeName(siteA, "node-3")]
	cluster.Status.Phase, cluster.Status.ReadyNodeCount = v1.StorageClusterDeploying, 1
	cluster.Status.Conditions[0].Status, cluster.Status.Conditions[0].Reason = metav1.ConditionFalse, v1.StorageClusterTooFewNodesReason
	cluster.Status.Conditions[0].Message = "1 of 3 nodes ready, placeCount 2"
	node.Status.Conditions[0].Status = metav1.ConditionFalse
	d.site.draftPhase("site-a-draft", v1.ClusterDeploymentConfigDeploying) // the site's draft says Deploying again
	d.round()
	d.expectPhase(v1.StorageSiteDeploymentOnline)
	ready := d.expectCondition(v1.StorageSiteDeploymentReadyCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentDeployingReason)
	if !strings.Contains(ready.Message, "1 of 3 nodes ready") {
		t.Errorf("Ready says %q, want the site's words", ready.Message)
	}
	if d.request.Status.ReadyNodeCount != 2 {
		t.Errorf("%d nodes ready, want 2", d.request.Status.ReadyNodeCount)
	}
	if d.result.RequeueAfter != RequeueSettled {
		t.Errorf("requeue after %s, want %s", d.result.RequeueAfter, RequeueSettled)
	}
}

func TestFailedDraftReportedWithTheSiteReason(t *testing.T) {
	d := discoveredDeployment(t, true)
	d.round()
	d.round() // the sizing goes out
	d.round() // the approval goes out
	d.round() // approved on the site
	d.expectPhase(v1.StorageSiteDeploymentDeploying)
	d.site.drafts["site-a-draft"].Status.Phase = v1.ClusterDeploymentConfigFailed
	d.site.drafts["site-a-draft"].Status.Reason = "node-2 has no /dev/sdb"
	d.round()

	d.expectPhase(v1.StorageSiteDeploymentFailed)
	if d.request.Status.Reason != "node-2 has no /dev/sdb" {
		t.Errorf("status.reason %q, want the site's", d.request.Status.Reason)
	}
	c := d.expectCondition(v1.StorageSiteDeploymentReadyCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentDeployFailedReason)
	if c.Message != "node-2 has no /dev/sdb" {
		t.Errorf("Ready's message %q, want the site's reason", c.Message)
	}
	if d.result.RequeueAfter != RequeueSettled {
		t.Errorf("requeue after %s once Failed, want %s", d.result.RequeueAfter, RequeueSettled)
	}
}

func TestNoApprovalDeliveredOntoADraftWithoutNodes(t *testing.T) {
	d := newDeployment(t, newRequest("site-a", siteA, true), siteA)
	d.round()
	d.site.completeRun(d.request.Status.Run, "site-a-draft") // the filters selected no node
	d.round()
	d.round()

	if manifests := d.manifests(); len(manifests) != 1 {
		t.Fatalf("the work carries %d manifests onto a draft without nodes, want the run alone", len(manifests))
	}
	for _, patch := range d.site.draftPatches {
		t.Errorf("the site received a draft patch %s", patch)
	}
	d.expectPhase(v1.StorageSiteDeploymentDiscovering)
	d.expectCondition(v1.StorageSiteDeploymentDiscoveredCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentNoNodesReason)
	d.expectCondition(v1.StorageSiteDeploymentApprovedCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentDraftHasNoNodesReason)
	if d.site.drafts["site-a-draft"].Spec.Approved {
		t.Error("the draft without nodes is approved on the site")
	}
}

func TestChangedDiscoveryIsANewRun(t *testing.T) {
	d := newDeployment(t, newRequest("site-a", siteA, false), siteA)
	d.round()
	first := d.request.Status.Run
	d.site.completeRun(first, "site-a-draft", threeNodes)
	d.round()

	d.request.Spec.Discovery.NodeNames = []string{"node-1", "node-2", "node-4"}
	d.request.Generation++
	if err := d.hub.Update(context.Background(), d.request); err != nil {
		t.Fatal(err)
	}
	d.round()

	second := d.request.Status.Run
	if second == first {
		t.Fatalf("the changed discovery kept the run name %s", first)
	}
	manifests := d.manifests()
	ops := manifests[0]["metadata"].(map[string]any)
	if kindOf(manifests[0]) != "OperatorOps" || ops["name"] != second {
		t.Fatalf("the work's run is %v, want the new OperatorOps %s", ops["name"], second)
	}
	if len(manifests) != 1 {
		t.Errorf("the new run's work carries %d manifests: the old draft is no business of the new run until its feedback names a draft", len(manifests))
	}
	if _, ok := d.site.ops[first]; !ok {
		t.Errorf("the first run %s is gone from the site: the work orphans what it drops", first)
	}
	if got := d.site.ops[second].Spec.NodeNames; strings.Join(got, ",") != "node-1,node-2,node-4" {
		t.Errorf("the new run's nodeNames %v", got)
	}
	d.expectPhase(v1.StorageSiteDeploymentDiscovering)

	d.site.completeRun(second, "site-a-draft-2", v1.NodeSet{Name: "storage", Nodes: []string{"node-1", "node-2", "node-4"}})
	d.round()
	d.round()
	views := d.views()
	if len(views) != 1 || views[0].Spec.Scope.Name != "site-a-draft-2" {
		t.Errorf("views %+v, want the one draft view re-scoped to the new run's draft", views)
	}
	d.expectPhase(v1.StorageSiteDeploymentDrafted)
}

func TestDeletionReleasesTheWorkTheViewsAndTheFinalizer(t *testing.T) {
	d := discoveredDeployment(t, false)
	d.round()
	if d.work() == nil || len(d.views()) == 0 {
		t.Fatal("nothing to release")
	}
	if err := d.hub.Delete(context.Background(), d.request); err != nil {
		t.Fatal(err)
	}
	d.reconcile()

	if work := d.work(); work != nil {
		t.Errorf("the work %s outlived its request", work.Name)
	}
	if views := d.views(); len(views) != 0 {
		t.Errorf("%d views outlived their request", len(views))
	}
	err := d.hub.Get(context.Background(), client.ObjectKeyFromObject(d.request), &v1.StorageSiteDeployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the request is still there (%v): its finalizer was not released", err)
	}
	if _, ok := d.site.drafts["site-a-draft"]; !ok {
		t.Error("the site lost its draft: withdrawing a request must not tear anything down")
	}
}

// Bad input.

func TestUnknownSiteDeliversNothing(t *testing.T) {
	d := newDeployment(t, newRequest("site-x", "site-x", true), siteA)
	d.reconcile()
	d.expectPhase(v1.StorageSiteDeploymentPending)
	c := d.expectCondition(v1.StorageSiteDeploymentDeliveredCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentSiteNotFoundReason)
	if !strings.Contains(c.Message, "site-x") {
		t.Errorf("message %q does not name the site", c.Message)
	}
	if d.request.Status.Work != "" || len(d.request.Status.Conditions) != 1 {
		t.Errorf("status %+v, want no work and only Delivered", d.request.Status)
	}
	var works workv1.ManifestWorkList
	if err := d.hub.List(context.Background(), &works); err != nil || len(works.Items) != 0 {
		t.Errorf("works %v (%v), want none", works.Items, err)
	}
	if d.result.RequeueAfter != RequeueInProgress {
		t.Errorf("requeue after %s, want %s: the site may be registered later", d.result.RequeueAfter, RequeueInProgress)
	}

	// The site is registered and accepted: the request goes on.
	site := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "site-x"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	if err := d.hub.Create(context.Background(), site); err != nil {
		t.Fatal(err)
	}
	d.reconcile()
	d.expectPhase(v1.StorageSiteDeploymentDiscovering)
	if d.work() == nil {
		t.Error("no work once the site exists")
	}
}

func TestSiteNotAcceptedDeliversNothing(t *testing.T) {
	d := newDeployment(t, newRequest("site-a", siteA, false), siteA)
	cluster := &clusterv1.ManagedCluster{}
	if err := d.hub.Get(context.Background(), client.ObjectKey{Name: siteA}, cluster); err != nil {
		t.Fatal(err)
	}
	cluster.Spec.HubAcceptsClient = false
	if err := d.hub.Update(context.Background(), cluster); err != nil {
		t.Fatal(err)
	}
	d.reconcile()
	d.expectPhase(v1.StorageSiteDeploymentPending)
	d.expectCondition(v1.StorageSiteDeploymentDeliveredCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentSiteNotAcceptedReason)
	if d.work() != nil {
		t.Error("a work for a site the hub has not accepted")
	}
}

func TestSizingTheDraftRejectsIsReportedAndNotApproved(t *testing.T) {
	d := discoveredDeployment(t, true)
	d.site.rejection = `ClusterDeploymentConfig.storage.baton.dev "site-a-draft" is invalid: spec.sizing.placeCount: Invalid value: 3: exceeds what the site allows`
	d.round()
	d.round()
	d.round()

	c := d.expectCondition(v1.StorageSiteDeploymentApprovedCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentSizingRejectedReason)
	if c.Message != d.site.rejection {
		t.Errorf("Approved's message %q, want the site's refusal", c.Message)
	}
	d.expectCondition(v1.StorageSiteDeploymentDeliveredCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentApplyFailedReason)
	d.expectPhase(v1.StorageSiteDeploymentDrafted)
	for _, patch := range d.site.draftPatches {
		if strings.Contains(patch, `"approved"`) {
			t.Errorf("an approval was delivered with a rejected sizing: %s", patch)
		}
	}
	if d.site.drafts["site-a-draft"].Spec.Approved || d.site.drafts["site-a-draft"].Spec.Sizing != nil {
		t.Errorf("the site's draft changed under a rejected patch: %+v", d.site.drafts["site-a-draft"].Spec)
	}
}

func TestASecondRequestForATakenSiteDeliversNothing(t *testing.T) {
	d := newDeployment(t, newRequest("site-a", siteA, false), siteA)
	d.round()
	second := newRequest("site-a-again", siteA, false)
	second.Namespace = "other"
	if err := d.hub.Create(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	other := &deployment{t: t, hub: d.hub, site: d.site, r: d.r, request: second}
	other.reconcile()

	other.expectPhase(v1.StorageSiteDeploymentPending)
	c := other.expectCondition(v1.StorageSiteDeploymentDeliveredCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentSiteTakenReason)
	if !strings.Contains(c.Message, hubNS+"/site-a") {
		t.Errorf("message %q does not name the request that holds the site", c.Message)
	}
	if other.work() != nil {
		t.Error("a second work for one site")
	}
	d.reconcile()
	d.expectCondition(v1.StorageSiteDeploymentDeliveredCondition, metav1.ConditionTrue, v1.StorageSiteDeploymentDeliveredReason)
}

func TestAFailedDiscoveryIsReportedWithTheSiteMessage(t *testing.T) {
	d := newDeployment(t, newRequest("site-a", siteA, true), siteA)
	d.round()
	d.site.failRun(d.request.Status.Run, "node-2: lsblk: exit status 32")
	d.round()
	d.expectPhase(v1.StorageSiteDeploymentFailed)
	d.expectCondition(v1.StorageSiteDeploymentDiscoveredCondition, metav1.ConditionFalse, v1.StorageSiteDeploymentDiscoveryFailedReason)
	if d.request.Status.Reason != "node-2: lsblk: exit status 32" {
		t.Errorf("reason %q, want the site's", d.request.Status.Reason)
	}
	if len(d.manifests()) != 1 {
		t.Error("a failed discovery delivered a draft patch")
	}
}

// TestTheWorkIsNotRewrittenWhenNothingChanged checks that a settled request
// does not ask the agent to apply again on every pass.
func TestTheWorkIsNotRewrittenWhenNothingChanged(t *testing.T) {
	d := newDeployment(t, newRequest("site-a", siteA, false), siteA)
	d.round()
	before := d.work().ResourceVersion
	d.reconcile()
	d.reconcile()
	if after := d.work().ResourceVersion; after != before {
		t.Errorf("the work moved from resourceVersion %s to %s without a change", before, after)
	}
	status, _ := json.Marshal(d.request.Status)
	d.reconcile()
	if again, _ := json.Marshal(d.request.Status); string(again) != string(status) {
		t.Errorf("the status changed without a change:\n%s\n%s", status, again)
	}
}
