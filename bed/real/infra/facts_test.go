package infra

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
	"github.com/baton-dr/baton/bed/real/ocm"
)

// The tests that read a cluster share one real kube-apiserver with baton's
// CRDs; each uses namespaces of its own.
var server = controlplanetest.Shared{
	CRDs:  func() ([]string, error) { return []string{"../../../deploy/crds"}, nil },
	Kinds: []func(*runtime.Scheme) error{v1.AddToScheme},
}

func TestMain(m *testing.M) { server.Main(m) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func createNamespace(t *testing.T, ctx context.Context, c client.Client, name string) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TestLackingReadsBatonHubWhereOCMInstallPutsIt: baton-hub is running on
// the hub once its Deployment in baton-hub's own namespace is Available --
// not one in baton-system (which the fact read before, so the lacking line
// said "baton-hub on the hub" after ocm install), nor one not Available.
func TestLackingReadsBatonHubWhereOCMInstallPutsIt(t *testing.T) {
	ctx, c := testContext(t), server.Client(t)
	hub, err := kubernetes.NewForConfig(server.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	read := func() bool {
		t.Helper()
		managedClusters, running, err := hubFacts(ctx, hub)
		if err != nil {
			t.Fatal(err)
		}
		if managedClusters {
			t.Error("the test's hub serves no ManagedCluster API, the fact says it does")
		}
		return running
	}
	if read() {
		t.Error("an empty hub runs baton-hub, the fact says")
	}
	deployment := func(namespace string) *appsv1.Deployment {
		labels := map[string]string{"app": "baton-hub"}
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "baton-hub"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "baton-hub", Image: "baton.local/baton:test"}}}}}}
	}
	createNamespace(t, ctx, c, "baton-system")
	elsewhere := deployment("baton-system")
	if err := c.Create(ctx, elsewhere); err != nil {
		t.Fatal(err)
	}
	if read() {
		t.Error("a baton-hub Deployment in baton-system counts as baton-hub on the hub")
	}
	createNamespace(t, ctx, c, ocm.HubControllerNamespace)
	installed := deployment(ocm.HubControllerNamespace)
	if err := c.Create(ctx, installed); err != nil {
		t.Fatal(err)
	}
	if read() {
		t.Error("baton-hub's Deployment with no replica Available counts as running")
	}
	installed.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	if err := c.Status().Update(ctx, installed); err != nil {
		t.Fatal(err)
	}
	if !read() {
		t.Error("baton-hub Available in its namespace: the fact still says it does not run")
	}
	if got := (Facts{HubOCM: true, HubController: true}).Lacking(); strings.Contains(got, "baton-hub") {
		t.Errorf("with baton-hub running the lacking line still names it: %s", got)
	}
}

// TestASitesClusterIDIsTheOneItRuns: the bed reads a site's storage
// cluster UUID from the site -- whatever made the StorageCluster (the
// hub's flow draws it) -- and names what to run when there is none, or
// more than one.
func TestASitesClusterIDIsTheOneItRuns(t *testing.T) {
	ctx, c := testContext(t), server.Client(t)
	createNamespace(t, ctx, c, "baton-system")
	if _, err := storageClusterID(ctx, c, SiteB); err == nil || !strings.Contains(err.Error(), "batonctl realbed ocm deploy-storage site-b") {
		t.Errorf("a site with no storage cluster: %v, want the command that deploys it", err)
	}
	drawn := "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	sc := func(name, id string) *v1.StorageCluster {
		return &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "baton-system", Name: name},
			Spec: v1.StorageClusterSpec{ClusterID: v1.UUID(id), StorageLayout: v1.StorageLayout{
				Pool: v1.PoolLayout{Name: "baton", Provisioning: v1.ProvisioningThin, Backend: v1.BackendBtrfs}, PlaceCount: 1,
				ReplicationInterval: metav1.Duration{Duration: ReplicationInterval}, SnapshotRetention: 3}}}
	}
	if err := c.Create(ctx, sc("site-b", drawn)); err != nil {
		t.Fatal(err)
	}
	if id, err := storageClusterID(ctx, c, SiteB); err != nil || string(id) != drawn {
		t.Errorf("site B's cluster id: %q, %v; want the StorageCluster's %s, not the layout's %s", id, err, drawn, SiteB.ChartID)
	}
	if err := c.Create(ctx, sc("baton-site-b", string(SiteB.ChartID))); err != nil {
		t.Fatal(err)
	}
	if _, err := storageClusterID(ctx, c, SiteB); err == nil || !strings.Contains(err.Error(), "2 StorageClusters") {
		t.Errorf("two StorageClusters: %v, want them named", err)
	}
}
