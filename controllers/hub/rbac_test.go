package hub

import (
	"path/filepath"
	"testing"

	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// TestTheConsoleRole binds deploy/hub's console ClusterRole to a person and
// acts as that person: requests and ManagedClusters yes, the transport and
// secrets no.
func TestTheConsoleRole(t *testing.T) {
	admin := envClient(t)
	ctx := testContext(t)
	controlplanetest.Apply(t, ctx, admin, filepath.Join(repositoryRoot(), "deploy", "hub", "console-role.yaml"))
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "console-alice"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "baton-console"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}
	if err := admin.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	registerSite(t, admin, "site-console", true)
	ensureNamespace(t, admin, "console")

	config := hubConfig(t)
	config.Impersonate = rest.ImpersonationConfig{UserName: "alice"}
	alice, err := client.New(config, client.Options{Scheme: envScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	// RBAC bindings take effect asynchronously in the authorizer's cache.
	eventually(t, "alice lists ManagedClusters", func() (bool, string) {
		err := alice.List(ctx, &clusterv1.ManagedClusterList{})
		return err == nil, errString(err)
	})

	request := newRequest("site-console", "site-console", false)
	request.Namespace = "console"
	if err := alice.Create(ctx, request); err != nil {
		t.Errorf("alice cannot create a StorageSiteDeployment: %v", err)
	}
	request.Spec.Approved = true
	if err := alice.Update(ctx, request); err != nil {
		t.Errorf("alice cannot approve it: %v", err)
	}
	if err := alice.Get(ctx, client.ObjectKeyFromObject(request), &v1.StorageSiteDeployment{}); err != nil {
		t.Errorf("alice cannot read it: %v", err)
	}
	request.Status.Phase = v1.StorageSiteDeploymentOnline
	if err := alice.Status().Update(ctx, request); !apierrors.IsForbidden(err) {
		t.Errorf("alice wrote the status (%v): only the hub writes what the site reports", err)
	}
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: "site-console"}}
	if err := alice.Create(ctx, work); !apierrors.IsForbidden(err) {
		t.Errorf("alice created a ManifestWork (%v): the transport is the hub's", err)
	}
	if err := alice.List(ctx, &corev1.SecretList{}); !apierrors.IsForbidden(err) {
		t.Errorf("alice listed secrets (%v)", err)
	}
	if err := alice.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "site-console"}}); !apierrors.IsForbidden(err) {
		t.Errorf("alice deleted a ManagedCluster (%v): the role reads them", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
