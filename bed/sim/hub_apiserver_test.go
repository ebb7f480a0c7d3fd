package sim

import (
	"context"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/hub"
	simworld "github.com/baton-dr/baton/sim"
)

func newSiteAPI(t *testing.T) *apiServer {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return newAPIServer("site-a", simworld.NewWorld(1), scheme, &v1.ClusterDeploymentConfig{}, &v1.OperatorOps{})
}

var draftKey = types.NamespacedName{Namespace: siteNamespace, Name: "run-1"}

// draftPatch is the apply configuration the hub's work carries.
func draftPatch(clusterName string, approve bool) map[string]any {
	spec := map[string]any{"sizing": map[string]any{"clusterName": clusterName, "pool": map[string]any{"name": "tank"}}}
	if approve {
		spec["approved"] = true
	}
	return map[string]any{"apiVersion": v1.GroupVersion.String(), "kind": "ClusterDeploymentConfig",
		"metadata": map[string]any{"name": draftKey.Name, "namespace": draftKey.Namespace}, "spec": spec}
}

// createOperatorDraft is the draft of one node set the operator creates after
// its discovery run.
func createOperatorDraft(t *testing.T, a *apiServer) *v1.ClusterDeploymentConfig {
	t.Helper()
	draft := &v1.ClusterDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: draftKey.Namespace, Name: draftKey.Name},
		Spec: v1.ClusterDeploymentConfigSpec{NodeSets: []v1.NodeSet{{Name: "set-1", Nodes: []string{"node-1"}}}}}
	if err := a.client(operatorManager).Create(context.Background(), draft); err != nil {
		t.Fatal(err)
	}
	return draft
}

// TestApplyDraftOwnsFieldsAsTheHubsE2ETestShowed walks the hub's server-side
// apply through the ownership the real API server gave it with OCM's agent:
// the operator owns nodeSets and approved (written false) from its create;
// the sizing goes unforced and is the hub's alone; an unforced approval
// conflicts with the operator; a forced one takes approved over; nodeSets
// stay the operator's.
func TestApplyDraftOwnsFieldsAsTheHubsE2ETestShowed(t *testing.T) {
	a := newSiteAPI(t)
	ctx := context.Background()
	createOperatorDraft(t, a)
	owned := func(field string, want ...string) {
		t.Helper()
		if got := a.managers(draftKey, field); !slices.Equal(got, want) {
			t.Errorf("%s is owned by %v, want %v", field, got, want)
		}
	}
	owned("nodeSets", operatorManager)
	owned("approved", operatorManager)

	if err := a.applyDraft(ctx, hub.FieldManager, false, draftPatch("site-a", false)); err != nil {
		t.Fatalf("the unforced sizing: %v", err)
	}
	owned("sizing", hub.FieldManager)
	err := a.applyDraft(ctx, hub.FieldManager, false, draftPatch("site-a", true))
	if !apierrors.IsConflict(err) {
		t.Fatalf("an unforced approval: %v, want a conflict with %s over approved", err, operatorManager)
	}
	if err := a.applyDraft(ctx, hub.FieldManager, true, draftPatch("site-a", true)); err != nil {
		t.Fatalf("the forced approval: %v", err)
	}
	owned("approved", hub.FieldManager)
	owned("nodeSets", operatorManager)
	got := &v1.ClusterDeploymentConfig{}
	if err := a.store.Get(ctx, draftKey, got); err != nil {
		t.Fatal(err)
	}
	if !got.Spec.Approved || got.Spec.Sizing == nil || got.Spec.Sizing.ClusterName != "site-a" || len(got.Spec.NodeSets) != 1 {
		t.Errorf("the draft after the approval: %+v", got.Spec)
	}
	if got.Generation != 3 {
		t.Errorf("generation %d, want 3: created, sized, approved", got.Generation)
	}

	// An approved draft is frozen: another sizing is refused by admission.
	err = a.applyDraft(ctx, hub.FieldManager, true, draftPatch("site-b", true))
	if !apierrors.IsInvalid(err) {
		t.Errorf("resizing an approved draft: %v, want Invalid", err)
	}
	// Applying what is there writes nothing.
	before := got.ResourceVersion
	if err := a.applyDraft(ctx, hub.FieldManager, true, draftPatch("site-a", true)); err != nil {
		t.Fatal(err)
	}
	if err := a.store.Get(ctx, draftKey, got); err != nil || got.ResourceVersion != before {
		t.Errorf("an unchanged apply wrote the draft (%v): resourceVersion %s -> %s", err, before, got.ResourceVersion)
	}
}

// TestApplyDraftConflictsWithAReviewerAndReleases: a sizing a reviewer wrote
// on the site is not overridden without force, the same sizing is shared,
// and a field its last owner stops applying goes.
func TestApplyDraftConflictsWithAReviewerAndReleases(t *testing.T) {
	a := newSiteAPI(t)
	ctx := context.Background()
	draft := createOperatorDraft(t, a)
	draft.Spec.Sizing = &v1.Sizing{ClusterName: "reviewed", StorageLayout: v1.StorageLayout{Pool: v1.PoolLayout{Name: "tank"}}}
	if err := a.client(bedManager).Update(ctx, draft); err != nil {
		t.Fatal(err)
	}
	if err := a.applyDraft(ctx, hub.FieldManager, false, draftPatch("site-a", false)); !apierrors.IsConflict(err) {
		t.Fatalf("sizing over a reviewer's: %v, want a conflict", err)
	}
	if err := a.applyDraft(ctx, hub.FieldManager, false, draftPatch("reviewed", false)); err != nil {
		t.Fatalf("the reviewer's own sizing: %v", err)
	}
	if got := a.managers(draftKey, "sizing"); !slices.Equal(got, []string{bedManager, hub.FieldManager}) {
		t.Errorf("sizing owned by %v, want shared", got)
	}

	// A manager that alone owns a field and stops applying it removes it.
	other := "another-hub"
	if err := a.applyDraft(ctx, other, true, draftPatch("elsewhere", false)); err != nil {
		t.Fatal(err)
	}
	if err := a.applyDraft(ctx, other, false, map[string]any{"apiVersion": v1.GroupVersion.String(), "kind": "ClusterDeploymentConfig",
		"metadata": map[string]any{"name": draftKey.Name, "namespace": draftKey.Namespace}, "spec": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	got := &v1.ClusterDeploymentConfig{}
	if err := a.store.Get(ctx, draftKey, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Sizing != nil {
		t.Errorf("sizing %+v stayed after its only owner released it", got.Spec.Sizing)
	}
}

func TestAdmissionRefusesWhatTheCRDsRefuse(t *testing.T) {
	sets := []v1.NodeSet{{Name: "set-1", Nodes: []string{"node-1"}}}
	sizing := &v1.Sizing{ClusterName: "site-a"}
	draft := func(sets []v1.NodeSet, sizing *v1.Sizing, approved bool) *v1.ClusterDeploymentConfig {
		return &v1.ClusterDeploymentConfig{Spec: v1.ClusterDeploymentConfigSpec{NodeSets: sets, Sizing: sizing, Approved: approved}}
	}
	request := func(site string, sizing *v1.Sizing, approved bool, nodes ...string) *v1.StorageSiteDeployment {
		return &v1.StorageSiteDeployment{Spec: v1.StorageSiteDeploymentSpec{Site: site, Sizing: sizing, Approved: approved,
			Discovery: v1.OperatorOpsSpec{NodeNames: nodes}}}
	}
	for _, tc := range []struct {
		name    string
		old     any
		updated any
		refused bool
	}{
		{"a draft approved without node sets", nil, draft(nil, sizing, true), true},
		{"a draft approved without sizing", nil, draft(sets, nil, true), true},
		{"a draft approved", draft(sets, sizing, false), draft(sets, sizing, true), false},
		{"an approval withdrawn", draft(sets, sizing, true), draft(sets, sizing, false), true},
		{"an approved draft resized", draft(sets, sizing, true), draft(sets, &v1.Sizing{ClusterName: "x"}, true), true},
		{"a draft resized before approval", draft(sets, sizing, false), draft(sets, &v1.Sizing{ClusterName: "x"}, false), false},
		{"a run's discovery changed", &v1.OperatorOps{}, &v1.OperatorOps{Spec: v1.OperatorOpsSpec{NodeNames: []string{"n"}}}, true},
		{"a request approved without sizing", nil, request("site-a", nil, true), true},
		{"a request moved to another site", request("site-a", nil, false), request("site-b", nil, false), true},
		{"a request's discovery changed", request("site-a", nil, false), request("site-a", nil, false, "n"), false},
		{"an approved request changed", request("site-a", sizing, true), request("site-a", sizing, true, "n"), true},
		{"a cluster's identity changed", &v1.StorageCluster{Spec: v1.StorageClusterSpec{ClusterID: "a"}},
			&v1.StorageCluster{Spec: v1.StorageClusterSpec{ClusterID: "b"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newSiteAPI(t)
			if err := hub.AddToScheme(a.scheme); err != nil {
				t.Fatal(err)
			}
			var old client.Object
			if tc.old != nil {
				old = tc.old.(client.Object)
			}
			err := a.admit(old, tc.updated.(client.Object))
			if tc.refused != (err != nil) || (err != nil && !apierrors.IsInvalid(err)) {
				t.Errorf("admit: %v, want refused %v (as Invalid)", err, tc.refused)
			}
		})
	}
}

// TestGenerationsFollowTheSpec: the generation grows with the spec and only
// with it; creation time is simulated time.
func TestGenerationsFollowTheSpec(t *testing.T) {
	a := newSiteAPI(t)
	ctx := context.Background()
	c := a.client(operatorManager)
	run := &v1.OperatorOps{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: "run"}}
	if err := c.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	if run.Generation != 1 || !run.CreationTimestamp.Time.Equal(a.clock.Now().Truncate(time.Second)) {
		t.Errorf("created at generation %d, %s", run.Generation, run.CreationTimestamp)
	}
	run.Labels = map[string]string{"a": "b"}
	if err := c.Update(ctx, run); err != nil || run.Generation != 1 {
		t.Errorf("a label changed the generation to %d (%v)", run.Generation, err)
	}
	run.Status.Phase = v1.OperatorOpsCompleted
	if err := c.Status().Update(ctx, run); err != nil || run.Generation != 1 {
		t.Errorf("the status changed the generation to %d (%v)", run.Generation, err)
	}
	var events []string
	a.watch(func(e watchEvent) { events = append(events, e.Kind+" "+e.Key.Name) })
	draft := &v1.ClusterDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: "d"}}
	if err := c.Create(ctx, draft); err != nil {
		t.Fatal(err)
	}
	draft.Spec.NodeSets = []v1.NodeSet{{Name: "s", Nodes: []string{"n"}}}
	if err := c.Update(ctx, draft); err != nil || draft.Generation != 2 {
		t.Errorf("a spec change: generation %d (%v), want 2", draft.Generation, err)
	}
	if want := []string{"ClusterDeploymentConfig d", "ClusterDeploymentConfig d"}; !slices.Equal(events, want) {
		t.Errorf("watch events %v, want %v", events, want)
	}
}
