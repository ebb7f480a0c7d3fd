package sim

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/controllers/hub"
)

func newHubWorld(t *testing.T, seed uint64) *World {
	t.Helper()
	w, err := New(Options{Seed: seed, Scenario: "test/hub", Records: CRDRecords, Undeployed: true})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// await lets time pass until the site's request is in phase.
func await(t *testing.T, w *World, site, phase string, limit time.Duration) bed.Storage {
	t.Helper()
	var st bed.Storage
	if !w.RunUntil(func() bool {
		st, _ = w.RequestedStorage(site)
		return st.Phase == phase
	}, limit) {
		t.Fatalf("the request for %s is %s after %s, want %s; violations %v", site, st.Phase, limit, phase, w.Violations())
	}
	return st
}

func noViolations(t *testing.T, w *World) {
	t.Helper()
	for _, v := range w.Violations() {
		t.Errorf("violation (%s): %s", v.Invariant, v.Message)
	}
}

func (w *World) siteObject(t *testing.T, site, name string, o client.Object) error {
	t.Helper()
	return w.Site(site).api.store.Get(context.Background(), types.NamespacedName{Namespace: siteNamespace, Name: name}, o)
}

func (w *World) work(t *testing.T, site string) *workv1.ManifestWork {
	t.Helper()
	var works workv1.ManifestWorkList
	if err := w.hub.api.store.List(context.Background(), &works, client.InNamespace(site)); err != nil {
		t.Fatal(err)
	}
	if len(works.Items) == 0 {
		return nil
	}
	return &works.Items[0]
}

// TestARequestGoesOnlineThroughOCMsAgents deploys a site's storage from the
// hub: the discovery, sizing and approval cross the work agent onto the
// site's API server, the flow's reconcilers expand the draft, the nodes join
// the site's data path, and the views bring the cluster back Online with the
// identity the site's records carry. Withdrawing the request releases the
// work and leaves everything it created.
func TestARequestGoesOnlineThroughOCMsAgents(t *testing.T) {
	w := newHubWorld(t, 1)
	if nodes, _ := w.Site("site-a").Store.Nodes(); len(nodes) != 0 {
		t.Fatalf("an undeployed site has nodes %v", nodes)
	}
	if err := w.RequestStorage(bed.StorageRequest{Site: "site-a", Approved: true}); err != nil {
		t.Fatal(err)
	}
	st := await(t, w, "site-a", "Online", 5*time.Minute)
	a := w.Site("site-a")
	if st.ClusterID != string(a.Cluster) || st.Pool != "tank" || st.Cluster != "site-a" ||
		!slices.Equal(st.Nodes, []string{"node-1", "node-2"}) || st.ReadyNodes != 2 {
		t.Errorf("Online as %+v, want the cluster %s on tank with two ready nodes", st, a.Cluster)
	}
	if nodes, err := a.Store.Nodes(); err != nil || len(nodes) != 2 {
		t.Errorf("the site's data path has the nodes %v (%v), want both: they joined through the flow", nodes, err)
	}
	draft := &v1.ClusterDeploymentConfig{}
	if err := w.siteObject(t, "site-a", st.Run, draft); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(draft)
	for field, want := range map[string][]string{"nodeSets": {operatorManager}, "sizing": {hub.FieldManager}, "approved": {hub.FieldManager}} {
		if got := a.api.managers(key, field); !slices.Equal(got, want) {
			t.Errorf("the draft's %s is owned by %v, want %v", field, got, want)
		}
	}
	run := &v1.OperatorOps{}
	if err := w.siteObject(t, "site-a", st.Run, run); err != nil || len(run.OwnerReferences) != 0 {
		t.Errorf("the run (%v) has owners %v: an orphaning work must not own it", err, run.OwnerReferences)
	}
	if work := w.work(t, "site-a"); work == nil || work.Generation != 3 {
		t.Errorf("the work %v: want generation 3 (the run, the sizing, the approval)", work)
	}

	if err := w.WithdrawStorage("site-a"); err != nil {
		t.Fatal(err)
	}
	if !w.RunUntil(func() bool { return w.work(t, "site-a") == nil }, time.Minute) {
		t.Fatalf("the agent did not release the withdrawn request's work")
	}
	for name, o := range map[string]client.Object{st.Run: &v1.OperatorOps{}, st.Run + " ": &v1.ClusterDeploymentConfig{},
		"site-a": &v1.StorageCluster{}, "node-1": &v1.StorageNode{}, "node-2": &v1.StorageNode{}} {
		if err := w.siteObject(t, "site-a", strings.TrimSpace(name), o); err != nil {
			t.Errorf("%T %s after the withdrawal: %v", o, name, err)
		}
	}
	if _, err := w.RequestedStorage("site-a"); !errors.Is(err, bed.ErrNoRequest) {
		t.Errorf("the withdrawn request: %v", err)
	}
	noViolations(t, w)
}

// TestAPartitionHoldsWhatTheHubWrites: nothing the hub writes while it cannot
// reach the site shows up there before the partition heals -- neither a run
// nor a withdrawal, whose work stays terminating on the hub.
func TestAPartitionHoldsWhatTheHubWrites(t *testing.T) {
	w := newHubWorld(t, 2)
	w.Partition("hub", "site-a", true)
	if err := w.RequestStorage(bed.StorageRequest{Site: "site-a"}); err != nil {
		t.Fatal(err)
	}
	w.Run(3 * time.Minute)
	if held, err := w.SiteStorage("site-a"); err != nil || len(held.Runs) != 0 {
		t.Fatalf("the site holds %v (%v) while cut off from the hub", held.Runs, err)
	}
	st, _ := w.RequestedStorage("site-a")
	request := &v1.StorageSiteDeployment{}
	if err := w.hub.api.store.Get(context.Background(), requestKey("site-a"), request); err != nil {
		t.Fatal(err)
	}
	if delivered := meta.FindStatusCondition(request.Status.Conditions, v1.StorageSiteDeploymentDeliveredCondition); st.Phase != "Discovering" ||
		delivered == nil || delivered.Status != metav1.ConditionFalse {
		t.Errorf("cut off: %s, delivered %+v", st.Phase, delivered)
	}
	w.Heal("hub", "site-a")
	st = await(t, w, "site-a", "Drafted", 2*time.Minute)

	w.Partition("hub", "site-a", false) // one way is enough to break the agent's connection
	if err := w.WithdrawStorage("site-a"); err != nil {
		t.Fatal(err)
	}
	w.Run(2 * time.Minute)
	if work := w.work(t, "site-a"); work == nil || work.DeletionTimestamp.IsZero() {
		t.Fatalf("the withdrawn work during the partition: %v, want it terminating on the hub", work)
	}
	w.HealAll()
	if !w.RunUntil(func() bool { return w.work(t, "site-a") == nil }, time.Minute) {
		t.Fatal("the agent did not release the work after the heal")
	}
	if held, _ := w.SiteStorage("site-a"); !slices.Equal(held.Runs, []string{st.Run}) {
		t.Errorf("the site holds the runs %v, want %s (orphaned)", held.Runs, st.Run)
	}
	noViolations(t, w)
}

// TestACrashedOperatorDiscoversAfterItsRestart: the run waits on the site
// while the operator is down; its restart lists the runs and answers it.
func TestACrashedOperatorDiscoversAfterItsRestart(t *testing.T) {
	w := newHubWorld(t, 3)
	w.CrashController("site-a")
	if err := w.RequestStorage(bed.StorageRequest{Site: "site-a"}); err != nil {
		t.Fatal(err)
	}
	w.Run(2 * time.Minute)
	st, _ := w.RequestedStorage("site-a")
	run := &v1.OperatorOps{}
	if err := w.siteObject(t, "site-a", st.Run, run); err != nil || run.Status.Phase != "" {
		t.Fatalf("the run on the site (%v) is %q while the operator is down", err, run.Status.Phase)
	}
	w.RestartController("site-a")
	await(t, w, "site-a", "Drafted", 2*time.Minute)
	noViolations(t, w)
}

// TestTheInvariantsCatchAnAgentOrAHubThatMisbehave feeds the checks what a
// broken agent or hub would do, and expects each as a violation.
func TestTheInvariantsCatchAnAgentOrAHubThatMisbehave(t *testing.T) {
	w := newHubWorld(t, 4)
	ctx := context.Background()
	if err := w.RequestStorage(bed.StorageRequest{Site: "site-a", Nodes: []string{"node-1"}}); err != nil {
		t.Fatal(err)
	}
	await(t, w, "site-a", "Drafted", 2*time.Minute)
	k := w.hub.klusterlet("site-a")

	// An agent that applies through a partition.
	w.Partition("hub", "site-a", true)
	if err := w.RequestStorage(bed.StorageRequest{Site: "site-a"}); err != nil {
		t.Fatal(err)
	}
	w.Run(time.Second)
	k.syncWorkNamed(w.work(t, "site-a").Name)
	w.HealAll()

	// A hub that approves a draft without nodes.
	empty := &v1.ClusterDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: "empty"}}
	if err := w.Site("site-a").objects.Create(ctx, empty); err != nil {
		t.Fatal(err)
	}
	patch, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1.ClusterDeploymentConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "ClusterDeploymentConfig"},
		ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: "empty"},
		Spec:       v1.ClusterDeploymentConfigSpec{Sizing: w.sizing("site-a"), Approved: true}})
	if err != nil {
		t.Fatal(err)
	}
	delete(patch["metadata"].(map[string]any), "creationTimestamp")
	delete(patch, "status")
	raw, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	rogue := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "site-a", Name: "rogue"},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: v1.GroupVersion.Group, Resource: "clusterdeploymentconfigs", Name: "empty", Namespace: siteNamespace},
				UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply,
					ServerSideApply: &workv1.ServerSideApplyConfig{FieldManager: hub.FieldManager, Force: true}}}}}}
	if err := w.hub.api.client(bedManager).Create(ctx, rogue); err != nil {
		t.Fatal(err)
	}
	w.Run(30 * time.Second)
	if err := w.siteObject(t, "site-a", "empty", empty); err != nil || empty.Spec.Approved {
		t.Errorf("the draft without nodes (%v) was approved: the site's API server refuses it", err)
	}
	if err := w.hub.api.store.Get(ctx, client.ObjectKeyFromObject(rogue), rogue); err != nil {
		t.Fatal(err)
	}
	if len(rogue.Status.ResourceStatus.Manifests) != 1 ||
		meta.IsStatusConditionTrue(rogue.Status.ResourceStatus.Manifests[0].Conditions, workv1.ManifestApplied) {
		t.Errorf("the rogue work's status %+v, want its manifest not applied", rogue.Status)
	}

	// A request whose phase goes back on its run.
	request := &v1.StorageSiteDeployment{}
	if err := w.hub.api.store.Get(ctx, requestKey("site-a"), request); err != nil {
		t.Fatal(err)
	}
	w.hub.checks.afterDeployment(requestKey("site-a"))
	request.Status.Phase = v1.StorageSiteDeploymentPending
	if err := w.hub.api.store.Status().Update(ctx, request); err != nil {
		t.Fatal(err)
	}
	w.hub.checks.afterDeployment(requestKey("site-a"))

	var got []string
	for _, v := range w.Violations() {
		got = append(got, v.Invariant)
	}
	for _, want := range []string{invariantPartition, invariantApprovalWithoutNodes, invariantPhase} {
		if !slices.Contains(got, want) {
			t.Errorf("no %q among the violations %v", want, got)
		}
	}
}

func TestTheHubNeedsCRDRecords(t *testing.T) {
	if _, err := New(Options{Seed: 1, Undeployed: true}); err == nil {
		t.Error("an undeployed world with memory records was made")
	}
	w, err := New(Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.RequestStorage(bed.StorageRequest{Site: "site-a"}); !errors.Is(err, ErrNoHub) {
		t.Errorf("a request in a world without a hub: %v", err)
	}
}

// TestTheHubReplays: the same seed replays the same run with the hub, its
// agents and the site's flow in the world, partitions included.
func TestTheHubReplays(t *testing.T) {
	run := func(seed uint64) string {
		w := newHubWorld(t, seed)
		if err := w.RequestStorage(bed.StorageRequest{Site: "site-a", Nodes: []string{"node-1"}}); err != nil {
			t.Fatal(err)
		}
		if err := w.RequestStorage(bed.StorageRequest{Site: "site-b", Approved: true}); err != nil {
			t.Fatal(err)
		}
		w.Run(7 * time.Second)
		w.Partition("hub", "site-a", true)
		w.Run(40 * time.Second)
		w.HealAll()
		await(t, w, "site-a", "Drafted", 3*time.Minute)
		if err := w.RequestStorage(bed.StorageRequest{Site: "site-a", Approved: true}); err != nil {
			t.Fatal(err)
		}
		w.Run(13 * time.Second)
		w.Partition("site-a", "hub", false)
		w.Run(time.Minute)
		w.HealAll()
		await(t, w, "site-a", "Online", 5*time.Minute)
		await(t, w, "site-b", "Online", time.Minute)
		noViolations(t, w)
		return w.Sim.Hash()
	}
	first, second := run(11), run(11)
	if first != second {
		t.Fatalf("seed 11 gave %s, then %s", first, second)
	}
	if other := run(12); other == first {
		t.Errorf("seeds 11 and 12 gave the same run %s", first)
	}
}

// TestADrillIsDeliveredAndWithdrawnWithItsWork runs the hub's other
// reconciler: a SiteTestFailover's work (foreground deletion, not orphaning)
// creates the drill on the site, its view projects it back, and withdrawing
// the request deletes the drill on the site -- once the agent reaches the hub.
func TestADrillIsDeliveredAndWithdrawnWithItsWork(t *testing.T) {
	w := newHubWorld(t, 5)
	ctx := context.Background()
	request := &v1.SiteTestFailover{ObjectMeta: metav1.ObjectMeta{Namespace: hubNamespace, Name: "drill"},
		Spec: v1.SiteTestFailoverSpec{Site: "site-b", SiteNamespace: siteNamespace,
			Drill: v1.TestFailoverSpec{Source: "pvc-1", TargetNamespace: "drill", PVCName: "bubble"}}}
	if err := w.hub.api.client(bedManager).Create(ctx, request); err != nil {
		t.Fatal(err)
	}
	drills := func() []v1.TestFailover {
		var list v1.TestFailoverList
		if err := w.Site("site-b").api.store.List(ctx, &list, client.InNamespace(siteNamespace)); err != nil {
			t.Fatal(err)
		}
		return list.Items
	}
	if !w.RunUntil(func() bool { return len(drills()) == 1 }, time.Minute) {
		t.Fatal("the drill never reached the site")
	}
	if got := drills()[0].Spec; got != request.Spec.Drill {
		t.Errorf("the site's drill %+v, want %+v", got, request.Spec.Drill)
	}
	w.Partition("hub", "site-b", true)
	if err := w.hub.api.client(bedManager).Delete(ctx, request); err != nil {
		t.Fatal(err)
	}
	w.Run(time.Minute)
	if len(drills()) != 1 {
		t.Fatal("the drill was deleted on the site through a partition")
	}
	w.HealAll()
	if !w.RunUntil(func() bool { return len(drills()) == 0 && w.work(t, "site-b") == nil }, time.Minute) {
		t.Fatalf("after the heal the drill is still on the site (%d) or its work on the hub", len(drills()))
	}
	noViolations(t, w)
}
