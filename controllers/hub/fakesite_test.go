package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// The fake site stands in for everything beyond the hub's API server: the
// site's work agent (it applies a ManifestWork's manifests to the site's
// objects and reports per-manifest conditions and status feedback), the view
// agent (it answers every ManagedClusterView from the site's objects), and,
// when a test says so, the site operator (a run completes or fails, an
// approved draft expands into a cluster). It refuses what the site's API
// server refuses: an approval of a draft without node sets, and whatever
// sizing a test marks as rejected.

const (
	siteA     = "site-a"
	siteNS    = v1.DefaultSiteNamespace
	hubNS     = "storage"
	clusterID = "0a0a0a0a-0000-4000-8000-00000000000a"
)

func newScheme(t *testing.T) *runtime.Scheme { return controlplanetest.Scheme(t, AddToScheme) }

// newHub is a fake hub API server with an accepted ManagedCluster per site.
func newHub(t *testing.T, sites ...string) client.Client {
	t.Helper()
	var objects []client.Object
	for _, site := range sites {
		objects = append(objects,
			&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: site}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: site}})
	}
	return fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(objects...).
		WithStatusSubresource(&v1.StorageSiteDeployment{}, &v1.SiteTestFailover{}, &workv1.ManifestWork{}, &viewv1beta1.ManagedClusterView{}).
		Build()
}

type fakeSite struct {
	t         *testing.T
	hub       client.Client
	name      string
	ops       map[string]*v1.OperatorOps
	drafts    map[string]*v1.ClusterDeploymentConfig
	clusters  map[string]*v1.StorageCluster
	nodes     map[string]*v1.StorageNode
	drills    map[string]*v1.TestFailover
	rejection string // a refusal of every draft patch, when set
	// draftPatches are the draft manifests the agent applied, as raw JSON.
	draftPatches []string
}

func newFakeSite(t *testing.T, hub client.Client, name string) *fakeSite {
	return &fakeSite{t: t, hub: hub, name: name,
		ops: map[string]*v1.OperatorOps{}, drafts: map[string]*v1.ClusterDeploymentConfig{},
		clusters: map[string]*v1.StorageCluster{}, nodes: map[string]*v1.StorageNode{}, drills: map[string]*v1.TestFailover{}}
}

// sync runs the work agent over every work of the site's namespace, then the
// view agent over every view.
func (s *fakeSite) sync() {
	s.t.Helper()
	ctx := context.Background()
	works := listIn[workv1.ManifestWorkList](ctx, s.t, s.hub, s.name).Items
	for i := range works {
		s.applyWork(ctx, &works[i])
	}
	views := listIn[viewv1beta1.ManagedClusterViewList](ctx, s.t, s.hub, s.name).Items
	for i := range views {
		s.answerView(ctx, &views[i])
	}
}

// listIn lists one kind in a site's namespace on the hub: the works the
// site's work agent applies, the views its view agent answers, in both site
// doubles.
func listIn[T any, L interface {
	*T
	client.ObjectList
}](ctx context.Context, t testing.TB, hub client.Client, site string) L {
	t.Helper()
	list := L(new(T))
	if err := hub.List(ctx, list, client.InNamespace(site)); err != nil {
		t.Fatal(err)
	}
	return list
}

func (s *fakeSite) applyWork(ctx context.Context, work *workv1.ManifestWork) {
	s.t.Helper()
	var reports []workv1.ManifestCondition
	allApplied := true
	for ordinal, manifest := range work.Spec.Workload.Manifests {
		var object map[string]any
		if err := json.Unmarshal(manifest.Raw, &object); err != nil {
			s.t.Fatalf("work %s manifest %d: %v", work.Name, ordinal, err)
		}
		metadata := object["metadata"].(map[string]any)
		name, namespace := metadata["name"].(string), metadata["namespace"].(string)
		kind := object["kind"].(string)
		applyErr := s.apply(kind, name, manifest.Raw)
		allApplied = allApplied && applyErr == nil
		reports = append(reports, s.report(int32(ordinal), kind, name, namespace, applyErr))
	}
	applied := metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete",
		Message: "Apply manifest work complete", ObservedGeneration: work.Generation}
	if !allApplied {
		applied.Status, applied.Reason, applied.Message = metav1.ConditionFalse, "AppliedManifestWorkFailed", "Failed to apply manifest work"
	}
	work.Status.Conditions = nil
	meta.SetStatusCondition(&work.Status.Conditions, applied)
	work.Status.ResourceStatus.Manifests = reports
	if err := s.hub.Status().Update(ctx, work); err != nil {
		s.t.Fatal(err)
	}
}

// apply applies one manifest as the site's API server would.
func (s *fakeSite) apply(kind, name string, raw []byte) error {
	s.t.Helper()
	switch kind {
	case "OperatorOps":
		if _, ok := s.ops[name]; !ok {
			ops := &v1.OperatorOps{}
			decode(s.t, raw, ops)
			s.ops[name] = ops
		}
	case "ClusterDeploymentConfig":
		s.draftPatches = append(s.draftPatches, string(raw))
		if s.rejection != "" {
			return fmt.Errorf("%s", s.rejection)
		}
		patch := &v1.ClusterDeploymentConfig{}
		decode(s.t, raw, patch)
		draft, ok := s.drafts[name]
		if !ok {
			draft = patch
			s.drafts[name] = draft
		}
		if patch.Spec.Approved && len(draft.Spec.NodeSets) == 0 {
			return fmt.Errorf(`ClusterDeploymentConfig.storage.baton.dev %q is invalid: spec.approved: Invalid value: "boolean": a draft without node sets cannot be approved`, name)
		}
		if draft.Spec.Approved && (patch.Spec.Sizing == nil || *patch.Spec.Sizing != *draft.Spec.Sizing) {
			return fmt.Errorf("ClusterDeploymentConfig.storage.baton.dev %q is invalid: spec: Invalid value: an approved draft is frozen", name)
		}
		draft.Spec.Sizing = patch.Spec.Sizing
		draft.Spec.Approved = draft.Spec.Approved || patch.Spec.Approved
	case "TestFailover":
		tf := &v1.TestFailover{}
		decode(s.t, raw, tf)
		if existing, ok := s.drills[name]; ok {
			existing.Spec = tf.Spec
		} else {
			s.drills[name] = tf
		}
	default:
		s.t.Fatalf("the work carries a %s, which the hub never sends", kind)
	}
	return nil
}

// report is the agent's per-manifest status, with the run's feedback.
func (s *fakeSite) report(ordinal int32, kind, name, namespace string, applyErr error) workv1.ManifestCondition {
	resources := map[string]string{"OperatorOps": operatorOpsResource, "ClusterDeploymentConfig": draftResource, "TestFailover": testFailoverResource}
	condition := metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: workv1.AppliedManifestComplete,
		Message: "Apply manifest complete", LastTransitionTime: metav1.Now()}
	if applyErr != nil {
		condition.Status, condition.Reason, condition.Message = metav1.ConditionFalse, workv1.AppliedManifestFailed, applyErr.Error()
	}
	report := workv1.ManifestCondition{
		ResourceMeta: workv1.ManifestResourceMeta{Ordinal: ordinal, Group: v1.GroupVersion.Group, Version: v1.GroupVersion.Version,
			Kind: kind, Resource: resources[kind], Name: name, Namespace: namespace},
		Conditions: []metav1.Condition{condition},
	}
	if ops, ok := s.ops[name]; ok && kind == "OperatorOps" {
		values := map[string]string{feedbackPhase: string(ops.Status.Phase), feedbackDraft: ops.Status.Draft}
		if c := meta.FindStatusCondition(ops.Status.Conditions, v1.OperatorOpsDiscoveredCondition); c != nil {
			values[feedbackMessage] = c.Message
		}
		for _, key := range slices.Sorted(maps.Keys(values)) {
			if values[key] == "" {
				continue // the agent reports no value for an empty path
			}
			value := values[key]
			report.StatusFeedbacks.Values = append(report.StatusFeedbacks.Values,
				workv1.FeedbackValue{Name: key, Value: workv1.FieldValue{Type: workv1.String, String: &value}})
		}
	}
	return report
}

// objectNamed is the object of that name in objects, or nil: an untyped nil,
// as a missing entry's typed nil pointer would not be.
func objectNamed[O client.Object](objects map[string]O, name string) client.Object {
	if o, ok := objects[name]; ok {
		return o
	}
	return nil
}

// answerView writes what the view agent would: the object, or not found.
func (s *fakeSite) answerView(ctx context.Context, view *viewv1beta1.ManagedClusterView) {
	s.t.Helper()
	scope := view.Spec.Scope
	var object client.Object
	switch scope.Kind {
	case "ClusterDeploymentConfig":
		object = objectNamed(s.drafts, scope.Name)
	case "StorageCluster":
		object = objectNamed(s.clusters, scope.Name)
	case "StorageNode":
		object = objectNamed(s.nodes, scope.Name)
	case "TestFailover":
		object = objectNamed(s.drills, scope.Name)
	default:
		s.t.Fatalf("a view of a %s, which the hub never asks for", scope.Kind)
	}
	condition := metav1.Condition{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue,
		Reason: viewv1beta1.ReasonGetResource, Message: "Watching resources successfully"}
	view.Status.Result = runtime.RawExtension{}
	if object == nil {
		condition.Status, condition.Reason = metav1.ConditionFalse, viewv1beta1.ReasonGetResourceFailed
		condition.Message = fmt.Sprintf("failed to get resource with err: %s.%s %q not found", strings.ToLower(scope.Resource), scope.Group, scope.Name)
	} else {
		copied := object.DeepCopyObject().(client.Object)
		copied.GetObjectKind().SetGroupVersionKind(v1.GroupVersion.WithKind(scope.Kind))
		copied.SetNamespace(siteNS)
		copied.SetName(scope.Name)
		raw, err := json.Marshal(copied)
		if err != nil {
			s.t.Fatal(err)
		}
		view.Status.Result = runtime.RawExtension{Raw: raw}
	}
	view.Status.Conditions = nil
	meta.SetStatusCondition(&view.Status.Conditions, condition)
	if err := s.hub.Status().Update(ctx, view); err != nil {
		s.t.Fatal(err)
	}
}

// The site operator's moves, as a test directs them.

// completeRun finishes a run: it writes the draft with the given node sets.
func (s *fakeSite) completeRun(run, draft string, sets ...v1.NodeSet) {
	s.t.Helper()
	ops, ok := s.ops[run]
	if !ok {
		s.t.Fatalf("no OperatorOps %s on the site; it has %v", run, slices.Sorted(maps.Keys(s.ops)))
	}
	ops.Status.Phase, ops.Status.Draft = v1.OperatorOpsCompleted, draft
	meta.SetStatusCondition(&ops.Status.Conditions, metav1.Condition{Type: v1.OperatorOpsDiscoveredCondition,
		Status: metav1.ConditionTrue, Reason: v1.OperatorOpsDiscoveredReason, Message: "every selected node answered"})
	existing, ok := s.drafts[draft]
	if !ok {
		existing = &v1.ClusterDeploymentConfig{}
		existing.Name, existing.Namespace = draft, siteNS
		s.drafts[draft] = existing
	}
	existing.Spec.NodeSets = sets
	existing.Status.Phase = v1.ClusterDeploymentConfigDrafted
}

// failRun fails a run with the site's message.
func (s *fakeSite) failRun(run, message string) {
	s.t.Helper()
	ops := s.ops[run]
	ops.Status.Phase = v1.OperatorOpsFailed
	meta.SetStatusCondition(&ops.Status.Conditions, metav1.Condition{Type: v1.OperatorOpsDiscoveredCondition,
		Status: metav1.ConditionFalse, Reason: v1.OperatorOpsDiscoveryFailedReason, Message: message})
}

// expand turns an approved draft into its Ready cluster and nodes.
func (s *fakeSite) expand(draftName string) {
	s.t.Helper()
	draft := s.drafts[draftName]
	if !draft.Spec.Approved {
		s.t.Fatalf("the site expands only an approved draft; %s is not", draftName)
	}
	name := draft.Spec.Sizing.ClusterName
	var nodes []string
	for _, set := range draft.Spec.NodeSets {
		nodes = append(nodes, set.Nodes...)
	}
	slices.Sort(nodes)
	ready := metav1.Condition{Type: v1.StorageClusterReadyCondition, Status: metav1.ConditionTrue, Reason: v1.StorageClusterReadyReason,
		LastTransitionTime: metav1.NewTime(time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC))}
	s.clusters[name] = &v1.StorageCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: siteNS},
		Spec:       v1.StorageClusterSpec{ClusterID: clusterID, StorageLayout: draft.Spec.Sizing.StorageLayout},
		Status:     v1.StorageClusterStatus{Phase: v1.StorageClusterReady, NodeCount: int32(len(nodes)), ReadyNodeCount: int32(len(nodes)), Conditions: []metav1.Condition{ready}},
	}
	for i, node := range nodes {
		nodeReady := ready
		nodeReady.Type, nodeReady.Reason = v1.StorageNodeReadyCondition, v1.StorageNodeReadyReason
		s.nodes[v1.StorageNodeName(name, node)] = &v1.StorageNode{
			ObjectMeta: metav1.ObjectMeta{Name: v1.StorageNodeName(name, node), Namespace: siteNS},
			Spec:       v1.StorageNodeSpec{Cluster: name, NodeName: node, Address: fmt.Sprintf("10.0.0.%d", 11+i)},
			Status:     v1.StorageNodeStatus{Role: v1.NodeRoleStorage, Reachable: true, Conditions: []metav1.Condition{nodeReady}},
		}
	}
	draft.Status.Phase = v1.ClusterDeploymentConfigDeployed
	draft.Status.Cluster = &v1.DeployedCluster{Name: name, ClusterID: clusterID, Pool: draft.Spec.Sizing.Pool.Name, Nodes: nodes}
}

// draftPhase sets a draft's phase as the site reports it.
func (s *fakeSite) draftPhase(name string, phase v1.ClusterDeploymentConfigPhase) {
	s.t.Helper()
	s.drafts[name].Status.Phase = phase
}

func decode(t *testing.T, raw []byte, into any) {
	t.Helper()
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
