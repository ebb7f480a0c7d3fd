package viewagent_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
	"github.com/baton-dr/baton/controllers/hub/viewagent"
)

// The test runs the agent against one real API server that is both the hub
// (the views, in the cluster's namespace "site-a") and the managed cluster
// (the objects, in "baton-system"). The agent reads both under identities of
// its own, impersonated: on the hub a member of the cluster's group, allowed
// the views of its namespace only; on the site a service account allowed to
// get ConfigMaps in baton-system only -- what a view may see is bounded by
// the site's RBAC, which the answers show.

const (
	cluster   = "site-a"
	siteSpace = "baton-system"
)

func repositoryRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := viewv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func as(config *rest.Config, user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(config)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	return c
}

// grant makes a Role in namespace with rules and binds it to subject.
func grant(t *testing.T, ctx context.Context, admin client.Client, namespace, name string, subject rbacv1.Subject, rules ...rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Rules: rules}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{subject}}
	for _, o := range []client.Object{role, binding} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTheAgentAnswersViewsWithinItsIdentities(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and etcd; skipped under -short")
	}
	config := controlplanetest.Start(t, filepath.Join(repositoryRoot(), "controllers", "hub", "testdata", "crds"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := scheme(t)
	admin, err := client.New(config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{cluster, "site-b", siteSpace} {
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	group := "system:open-cluster-management:" + cluster
	grant(t, ctx, admin, cluster, "views", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: group},
		rbacv1.PolicyRule{APIGroups: []string{viewv1beta1.GroupVersion.Group}, Resources: []string{"managedclusterviews"}, Verbs: []string{"get", "list", "watch"}},
		rbacv1.PolicyRule{APIGroups: []string{viewv1beta1.GroupVersion.Group}, Resources: []string{"managedclusterviews/status"}, Verbs: []string{"update", "patch"}})
	grant(t, ctx, admin, siteSpace, "reader", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: siteSpace, Name: "view-agent"},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}})

	hubConfig := as(config, "system:open-cluster-management:"+cluster+":agent", group, "system:open-cluster-management:managed-clusters")
	siteConfig := as(config, "system:serviceaccount:"+siteSpace+":view-agent", "system:serviceaccounts")
	site, err := client.New(siteConfig, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	manager, err := ctrl.NewManager(hubConfig, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{cluster: {}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&viewagent.Reconciler{Hub: manager.GetClient(), Site: site, Mapper: site.RESTMapper()}).SetupWithManager(manager); err != nil {
		t.Fatal(err)
	}
	managerCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- manager.Start(managerCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: siteSpace, Name: "settings"}, Data: map[string]string{"round": "1"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: siteSpace, Name: "token"}, StringData: map[string]string{"token": "s3cret"}}
	for _, o := range []client.Object{settings, secret} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	view := func(namespace, name string, scope viewv1beta1.ViewScope) *viewv1beta1.ManagedClusterView {
		v := &viewv1beta1.ManagedClusterView{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: viewv1beta1.ViewSpec{Scope: scope}}
		if err := admin.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	configMap := func(name string) viewv1beta1.ViewScope {
		return viewv1beta1.ViewScope{Version: "v1", Kind: "ConfigMap", Namespace: siteSpace, Name: name, UpdateIntervalSeconds: 1}
	}
	// until polls the view until check holds: the agent runs in its own
	// goroutines, so this waits for it -- a bound, not a timing assertion.
	until := func(what string, v *viewv1beta1.ManagedClusterView, check func(*metav1.Condition, map[string]any) bool) {
		t.Helper()
		var condition *metav1.Condition
		var result map[string]any
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			if err := admin.Get(ctx, client.ObjectKeyFromObject(v), v); err != nil {
				return false, err
			}
			condition = meta.FindStatusCondition(v.Status.Conditions, viewv1beta1.ConditionViewProcessing)
			result = nil
			if len(v.Status.Result.Raw) > 0 {
				if err := json.Unmarshal(v.Status.Result.Raw, &result); err != nil {
					return false, err
				}
			}
			return check(condition, result), nil
		})
		if err != nil {
			t.Fatalf("%s: %v; condition %+v, result %v", what, err, condition, result)
		}
	}
	data := func(result map[string]any, key string) string {
		values, _ := result["data"].(map[string]any)
		value, _ := values[key].(string)
		return value
	}

	found := view(cluster, "settings", configMap("settings"))
	until("the view holds the ConfigMap", found, func(c *metav1.Condition, r map[string]any) bool {
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == viewv1beta1.ReasonGetResource && data(r, "round") == "1"
	})
	settings.Data["round"] = "2"
	if err := admin.Update(ctx, settings); err != nil {
		t.Fatal(err)
	}
	until("the view follows the ConfigMap after its interval", found, func(c *metav1.Condition, r map[string]any) bool { return data(r, "round") == "2" })

	missing := view(cluster, "missing", configMap("no-such-map"))
	until("a missing object is reported, with no result", missing, func(c *metav1.Condition, r map[string]any) bool {
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == viewv1beta1.ReasonGetResourceFailed &&
			strings.Contains(c.Message, "not found") && r == nil
	})
	missing.Spec.Scope = configMap("settings")
	if err := admin.Update(ctx, missing); err != nil {
		t.Fatal(err)
	}
	until("a re-scoped view is answered with the new object", missing, func(c *metav1.Condition, r map[string]any) bool {
		return c != nil && c.Status == metav1.ConditionTrue && data(r, "round") == "2"
	})

	refused := view(cluster, "token", viewv1beta1.ViewScope{Version: "v1", Kind: "Secret", Namespace: siteSpace, Name: "token"})
	until("an object the agent may not read is refused, never shown", refused, func(c *metav1.Condition, r map[string]any) bool {
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "forbidden") && r == nil
	})
	if strings.Contains(string(refused.Status.Result.Raw), "s3cret") {
		t.Error("the refused view carries the secret")
	}

	byResource := view(cluster, "by-resource", viewv1beta1.ViewScope{Resource: "configmaps", Namespace: siteSpace, Name: "settings"})
	until("a scope naming a resource resolves its kind", byResource, func(c *metav1.Condition, r map[string]any) bool {
		return c != nil && c.Status == metav1.ConditionTrue && r["kind"] == "ConfigMap"
	})
	for name, want := range map[string]struct {
		scope  viewv1beta1.ViewScope
		reason string
	}{
		"no-kind": {viewv1beta1.ViewScope{Name: "settings"}, viewv1beta1.ReasonResourceTypeInvalid},
		"no-name": {viewv1beta1.ViewScope{Version: "v1", Kind: "ConfigMap"}, viewv1beta1.ReasonResourceNameInvalid},
		"unknown": {viewv1beta1.ViewScope{Group: "storage.baton.dev", Version: "v1alpha1", Kind: "NoSuchKind", Name: "x"}, viewv1beta1.ReasonResourceGVKInvalid},
	} {
		bad := view(cluster, name, want.scope)
		until("a bad scope ("+name+") is named", bad, func(c *metav1.Condition, r map[string]any) bool {
			return c != nil && c.Status == metav1.ConditionFalse && c.Reason == want.reason
		})
	}

	// Another cluster's view is not this agent's: it is never answered. The
	// next answer of this cluster's view shows the agent ran past it.
	other := view("site-b", "settings", configMap("settings"))
	settings.Data["round"] = "3"
	if err := admin.Update(ctx, settings); err != nil {
		t.Fatal(err)
	}
	until("this cluster's view moves on", found, func(c *metav1.Condition, r map[string]any) bool { return data(r, "round") == "3" })
	if err := admin.Get(ctx, client.ObjectKeyFromObject(other), other); err != nil {
		t.Fatal(err)
	}
	if len(other.Status.Conditions) != 0 || len(other.Status.Result.Raw) != 0 {
		t.Errorf("the agent of %s answered a view of site-b: %+v", cluster, other.Status)
	}
}
