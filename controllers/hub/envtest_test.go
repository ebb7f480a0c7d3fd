package hub

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// The envtest cases run the reconciler against a real API server with OCM's
// CRDs: the work, the views and the request's status must pass the real
// schemas, and the site's half (the draft's CEL, server-side apply and its
// conflicts) is the API server's own, through the local agent.

func TestOCMAPIsAreDiscovered(t *testing.T) {
	d, err := discovery.NewDiscoveryClientForConfig(hubConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		groupVersion string
		resource     string
		want         bool
	}{
		{workv1.GroupVersion.String(), "manifestworks", true},
		{viewv1beta1.GroupVersion.String(), viewv1beta1.Resource, true},
		{workv1.GroupVersion.String(), "manifestworkreplicasets", false},
		{"nothing.example/v1", "things", false},
	} {
		got, err := Served(d, tc.groupVersion, tc.resource)
		if err != nil || got != tc.want {
			t.Errorf("Served(%s, %s) = %t, %v; want %t", tc.groupVersion, tc.resource, got, err, tc.want)
		}
	}
}

// siteOperator plays the site operator's writes on the shared API server.
type siteOperator struct {
	t *testing.T
	c client.Client
}

const siteOperatorManager = "baton-controller"

func (s siteOperator) completeRun(ctx context.Context, run, draft string, sets ...v1.NodeSet) {
	s.t.Helper()
	ops := &v1.OperatorOps{}
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: run}, ops); err != nil {
		s.t.Fatalf("the run %s is not on the site: %v", run, err)
	}
	ops.Status.Phase, ops.Status.Draft = v1.OperatorOpsCompleted, draft
	meta.SetStatusCondition(&ops.Status.Conditions, metav1.Condition{Type: v1.OperatorOpsDiscoveredCondition,
		Status: metav1.ConditionTrue, Reason: v1.OperatorOpsDiscoveredReason, Message: "every selected node answered"})
	if err := s.c.Status().Update(ctx, ops, client.FieldOwner(siteOperatorManager)); err != nil {
		s.t.Fatal(err)
	}
	cdc := &v1.ClusterDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Name: draft, Namespace: siteNS},
		Spec: v1.ClusterDeploymentConfigSpec{NodeSets: sets}}
	if err := s.c.Create(ctx, cdc, client.FieldOwner(siteOperatorManager)); err != nil {
		s.t.Fatal(err)
	}
}

// expand builds the Ready cluster and nodes of an approved draft.
func (s siteOperator) expand(ctx context.Context, draftName string) {
	s.t.Helper()
	draft := &v1.ClusterDeploymentConfig{}
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: draftName}, draft); err != nil {
		s.t.Fatal(err)
	}
	if !draft.Spec.Approved {
		s.t.Fatalf("the draft %s is not approved", draftName)
	}
	name, ready := draft.Spec.Sizing.ClusterName, metav1.Condition{Status: metav1.ConditionTrue, Reason: "Ready", Message: "fixture",
		LastTransitionTime: metav1.Now()}
	cluster := &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: siteNS},
		Spec: v1.StorageClusterSpec{ClusterID: clusterID, StorageLayout: draft.Spec.Sizing.StorageLayout}}
	s.create(ctx, cluster)
	ready.Type = v1.StorageClusterReadyCondition
	cluster.Status = v1.StorageClusterStatus{Phase: v1.StorageClusterReady, NodeCount: 3, ReadyNodeCount: 3, Conditions: []metav1.Condition{ready}}
	s.status(ctx, cluster)
	nodes := clusterNodes(draft)
	for i, node := range nodes {
		sn := &v1.StorageNode{ObjectMeta: metav1.ObjectMeta{Name: v1.StorageNodeName(name, node), Namespace: siteNS},
			Spec: v1.StorageNodeSpec{Cluster: name, NodeName: node, Address: "10.0.0." + string(rune('1'+i)),
				Devices: []v1.PoolDevice{{Path: "/dev/sdb", Type: v1.DeviceTypeDisk}}}}
		s.create(ctx, sn)
		ready.Type = v1.StorageNodeReadyCondition
		sn.Status = v1.StorageNodeStatus{Role: v1.NodeRoleStorage, Reachable: true, Conditions: []metav1.Condition{ready}}
		s.status(ctx, sn)
	}
	draft.Status = v1.ClusterDeploymentConfigStatus{Phase: v1.ClusterDeploymentConfigDeployed,
		Cluster: &v1.DeployedCluster{Name: name, ClusterID: clusterID, Pool: draft.Spec.Sizing.Pool.Name, Nodes: nodes}}
	s.status(ctx, draft)
}

func (s siteOperator) create(ctx context.Context, o client.Object) {
	s.t.Helper()
	if err := s.c.Create(ctx, o, client.FieldOwner(siteOperatorManager)); err != nil {
		s.t.Fatalf("create %T %s: %v", o, o.GetName(), err)
	}
}

func (s siteOperator) status(ctx context.Context, o client.Object) {
	s.t.Helper()
	if err := s.c.Status().Update(ctx, o, client.FieldOwner(siteOperatorManager)); err != nil {
		s.t.Fatalf("status of %T %s: %v", o, o.GetName(), err)
	}
}

// envDeployment drives one request through the reconciler and the local agent.
type envDeployment struct {
	t       *testing.T
	c       client.Client
	r       *StorageSiteDeploymentReconciler
	agent   *localAgent
	request *v1.StorageSiteDeployment
}

func newEnvDeployment(t *testing.T, name, site string, approved bool) *envDeployment {
	t.Helper()
	c := envClient(t)
	registerSite(t, c, site, true)
	ensureNamespace(t, c, hubNS)
	ensureNamespace(t, c, siteNS)
	request := newRequest(name, site, approved)
	if err := c.Create(testContext(t), request); err != nil {
		t.Fatalf("the API server refused the request: %v", err)
	}
	return &envDeployment{t: t, c: c, r: &StorageSiteDeploymentReconciler{Client: c},
		agent: &localAgent{t: t, hub: c, c: c, site: site}, request: request}
}

// advance runs rounds (reconcile, agent, reconcile) until done holds, at
// most rounds times.
func (e *envDeployment) advance(rounds int, done func(*v1.StorageSiteDeployment) bool) {
	e.t.Helper()
	ctx := testContext(e.t)
	for range rounds {
		e.reconcile(ctx)
		if done(e.request) {
			return
		}
		e.agent.sync(ctx)
	}
	e.reconcile(ctx)
	if !done(e.request) {
		e.t.Fatalf("not there after %d rounds: phase %s, %s", rounds, e.request.Status.Phase, conditionSummary(e.request.Status.Conditions))
	}
}

func (e *envDeployment) reconcile(ctx context.Context) {
	e.t.Helper()
	if _, err := e.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(e.request)}); err != nil {
		e.t.Fatalf("reconcile: %v", err)
	}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(e.request), e.request); err != nil {
		e.t.Fatal(err)
	}
}

func conditionIs(conditionType, reason string) func(*v1.StorageSiteDeployment) bool {
	return func(r *v1.StorageSiteDeployment) bool {
		c := meta.FindStatusCondition(r.Status.Conditions, conditionType)
		return c != nil && c.Reason == reason
	}
}

func phaseIs(phase v1.StorageSiteDeploymentPhase) func(*v1.StorageSiteDeployment) bool {
	return func(r *v1.StorageSiteDeployment) bool { return r.Status.Phase == phase }
}

// managersOf lists the field managers that own a top-level spec field.
func managersOf(draft *v1.ClusterDeploymentConfig, field string) []string {
	var managers []string
	for _, entry := range draft.ManagedFields {
		if entry.FieldsV1 != nil && strings.Contains(entry.FieldsV1.GetRawString(), `"f:`+field+`"`) {
			managers = append(managers, entry.Manager)
		}
	}
	slices.Sort(managers)
	return managers
}

func TestDeploymentOnARealAPIServer(t *testing.T) {
	e := newEnvDeployment(t, "site-env", "site-env", true)
	ctx := testContext(t)
	site := siteOperator{t: t, c: e.c}
	e.advance(3, conditionIs(v1.StorageSiteDeploymentDeliveredCondition, v1.StorageSiteDeploymentDeliveredReason))

	ops := &v1.OperatorOps{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: e.request.Status.Run}, ops); err != nil {
		t.Fatalf("the agent created no OperatorOps from the work: %v", err)
	}
	site.completeRun(ctx, e.request.Status.Run, "site-env", threeNodes)
	e.advance(8, phaseIs(v1.StorageSiteDeploymentDeploying))

	draft := &v1.ClusterDeploymentConfig{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: "site-env"}, draft); err != nil {
		t.Fatal(err)
	}
	if !draft.Spec.Approved || len(draft.Spec.NodeSets) != 1 || draft.Spec.Sizing == nil || draft.Spec.Sizing.ClusterName != "site-env" {
		t.Fatalf("the site's draft %+v, want the node sets, the hub's sizing and the approval", draft.Spec)
	}
	if got := managersOf(draft, "nodeSets"); !slices.Equal(got, []string{siteOperatorManager}) {
		t.Errorf("nodeSets are owned by %v, want the site operator alone: the hub's apply must not touch them", got)
	}
	if got := managersOf(draft, "sizing"); !slices.Contains(got, FieldManager) {
		t.Errorf("sizing is owned by %v, want %s", got, FieldManager)
	}
	if got := managersOf(draft, "approved"); !slices.Contains(got, FieldManager) {
		t.Errorf("approved is owned by %v, want %s", got, FieldManager)
	}

	site.expand(ctx, "site-env")
	e.advance(4, phaseIs(v1.StorageSiteDeploymentOnline))
	cluster := e.request.Status.Cluster
	if cluster == nil || cluster.ClusterID != clusterID || cluster.Pool != "baton" || len(cluster.Nodes) != 3 || e.request.Status.ReadyNodeCount != 3 {
		t.Errorf("status.cluster %+v (ready %d), want the uuid, the pool and three ready nodes", cluster, e.request.Status.ReadyNodeCount)
	}

	if err := e.c.Delete(ctx, e.request); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(e.request)}); err != nil {
		t.Fatal(err)
	}
	var works workv1.ManifestWorkList
	var views viewv1beta1.ManagedClusterViewList
	if err := e.c.List(ctx, &works, client.InNamespace("site-env")); err != nil || len(works.Items) != 0 {
		t.Errorf("works after the release: %d (%v)", len(works.Items), err)
	}
	if err := e.c.List(ctx, &views, client.InNamespace("site-env")); err != nil || len(views.Items) != 0 {
		t.Errorf("views after the release: %d (%v)", len(views.Items), err)
	}
	if err := e.c.Get(ctx, client.ObjectKeyFromObject(e.request), &v1.StorageSiteDeployment{}); err == nil {
		t.Error("the request outlived its release")
	}
}

// TestASizingTheSiteOwnsIsRejected: a reviewer on the site sized the draft
// first; the hub's apply (without force) conflicts, the site's answer is
// reported, and no approval is delivered.
func TestASizingTheSiteOwnsIsRejected(t *testing.T) {
	e := newEnvDeployment(t, "site-conflict", "site-conflict", true)
	ctx := testContext(t)
	e.advance(3, conditionIs(v1.StorageSiteDeploymentDeliveredCondition, v1.StorageSiteDeploymentDeliveredReason))
	siteOperator{t: t, c: e.c}.completeRun(ctx, e.request.Status.Run, "site-conflict", threeNodes)

	reviewer := sizingFor("site-conflict")
	reviewer.PlaceCount = 3
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.GroupVersion.String(), "kind": "ClusterDeploymentConfig",
		"metadata": map[string]any{"name": "site-conflict", "namespace": siteNS},
		"spec":     map[string]any{"sizing": map[string]any{"clusterName": "site-conflict", "placeCount": int64(3), "pool": map[string]any{"name": "baton"}}},
	}}
	if err := e.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner("site-reviewer")); err != nil {
		t.Fatal(err)
	}

	e.advance(6, conditionIs(v1.StorageSiteDeploymentApprovedCondition, v1.StorageSiteDeploymentSizingRejectedReason))
	c := meta.FindStatusCondition(e.request.Status.Conditions, v1.StorageSiteDeploymentApprovedCondition)
	if !strings.Contains(c.Message, "conflict") || !strings.Contains(c.Message, "site-reviewer") {
		t.Errorf("Approved's message %q, want the API server's conflict naming the site's reviewer", c.Message)
	}
	draft := &v1.ClusterDeploymentConfig{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: siteNS, Name: "site-conflict"}, draft); err != nil {
		t.Fatal(err)
	}
	if draft.Spec.Approved || draft.Spec.Sizing.PlaceCount != 3 {
		t.Errorf("the draft %+v: the reviewer's sizing must stand and nothing be approved", draft.Spec)
	}
}
