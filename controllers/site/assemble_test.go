package site_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	site "github.com/baton-dr/baton/controllers/site"
)

// The defaults a layout written in code gets (site.Defaulted: the
// simulation's sites) are the ones the API server gives a StorageCluster that
// names none: the CRD's.
func TestTheLayoutDefaultsAreTheCRDs(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c)
	ctx := testContext(t)
	cluster := &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site-a"},
		Spec: v1.StorageClusterSpec{ClusterID: v1.UUID(clusterA), StorageLayout: v1.StorageLayout{Pool: v1.PoolLayout{Name: "baton"}}}}
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	var stored v1.StorageCluster
	if err := c.Get(ctx, client.ObjectKeyFromObject(cluster), &stored); err != nil {
		t.Fatal(err)
	}
	want := stored.Spec.StorageLayout
	named := v1.PoolLayout{Name: want.Pool.Name, Provisioning: want.Pool.Provisioning, Backend: want.Pool.Backend}
	got := site.Defaulted(v1.StorageLayout{Pool: named})
	if got != want {
		t.Errorf("site.Defaulted gives\n  %+v\nthe API server defaults the CRD to\n  %+v", got, want)
	}
	if again := site.Defaulted(want); again != want {
		t.Errorf("Defaulted changed a layout that names every field: %+v", again)
	}
}
