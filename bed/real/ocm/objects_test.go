package ocm

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The module's manifests are rendered for real (the Go module cache, or
// the proxy): these tests read what the hub and the sites would get.

func moduleDir(t *testing.T) string {
	t.Helper()
	dir, err := ModuleDir(context.Background())
	if err != nil {
		t.Skipf("the OCM module cannot be had here: %v", err)
	}
	return dir
}

func find[T any](t *testing.T, objects []*unstructured.Unstructured, kind, namespace, name string) *T {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			out := new(T)
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	var names []string
	for _, o := range objects {
		names = append(names, o.GetKind()+" "+key(o))
	}
	t.Fatalf("no %s %s/%s among %v", kind, namespace, name, names)
	return nil
}

func hasRule(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	return slices.ContainsFunc(rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
	})
}

func TestTheHubRunsOCMsRegistrationControllerWithItsOwnRoles(t *testing.T) {
	objects, err := hubObjects(moduleDir(t), "baton.local/ocm:test")
	if err != nil {
		t.Fatal(err)
	}
	d := find[appsv1.Deployment](t, objects, "Deployment", HubNamespace, "cluster-manager-registration-controller")
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "baton.local/ocm:test" || !slices.Equal(c.Args, []string{"/registration", "controller"}) {
		t.Errorf("the registration controller runs %s %v", c.Image, c.Args)
	}
	if d.Spec.Template.Spec.ServiceAccountName != "registration-controller-sa" || c.SecurityContext.RunAsNonRoot == nil || !*c.SecurityContext.RunAsNonRoot {
		t.Errorf("the registration controller's account %q, security %+v", d.Spec.Template.Spec.ServiceAccountName, c.SecurityContext)
	}
	sa := find[corev1.ServiceAccount](t, objects, "ServiceAccount", HubNamespace, "registration-controller-sa")
	for k := range sa.Annotations {
		if strings.HasSuffix(k, "-") {
			t.Errorf("the controller's ServiceAccount keeps the removal %q the template writes", k)
		}
	}
	role := find[rbacv1.ClusterRole](t, objects, "ClusterRole", "", "open-cluster-management:cluster-manager-registration:controller")
	for _, need := range [][3]string{{"certificates.k8s.io", "certificatesigningrequests/approval", "update"},
		{"cluster.open-cluster-management.io", "managedclusters/status", "update"}, {"", "namespaces", "create"}} {
		if !hasRule(role.Rules, need[0], need[1], need[2]) {
			t.Errorf("the controller's role lacks %v", need)
		}
	}
	binding := find[rbacv1.ClusterRoleBinding](t, objects, "ClusterRoleBinding", "", "open-cluster-management:cluster-manager-registration:controller")
	if binding.RoleRef.Name != role.Name || binding.Subjects[0].Name != "registration-controller-sa" || binding.Subjects[0].Namespace != HubNamespace {
		t.Errorf("the controller's binding %+v", binding)
	}

	// The bootstrap identity may register a cluster and nothing more: no
	// approval, no acceptance, no works.
	bootstrap := find[rbacv1.ClusterRole](t, objects, "ClusterRole", "", "open-cluster-management:bootstrap")
	for _, allowed := range [][3]string{{"certificates.k8s.io", "certificatesigningrequests", "create"},
		{"cluster.open-cluster-management.io", "managedclusters", "create"}} {
		if !hasRule(bootstrap.Rules, allowed[0], allowed[1], allowed[2]) {
			t.Errorf("the bootstrap role lacks %v", allowed)
		}
	}
	for _, denied := range [][3]string{{"certificates.k8s.io", "certificatesigningrequests/approval", "update"},
		{"cluster.open-cluster-management.io", "managedclusters", "update"}, {"work.open-cluster-management.io", "manifestworks", "get"}} {
		if hasRule(bootstrap.Rules, denied[0], denied[1], denied[2]) {
			t.Errorf("the bootstrap role allows %v", denied)
		}
	}
	account := find[corev1.ServiceAccount](t, objects, "ServiceAccount", OperatorNamespace, BootstrapServiceAccount)
	boundTo := find[rbacv1.ClusterRoleBinding](t, objects, "ClusterRoleBinding", "", "open-cluster-management:bootstrap:agent-registration")
	if boundTo.RoleRef.Name != bootstrap.Name || boundTo.Subjects[0].Name != account.Name || bootstrapUser() != "system:serviceaccount:"+OperatorNamespace+":"+account.Name {
		t.Errorf("the bootstrap binding %+v", boundTo)
	}
}

func TestTheKlusterletRunsOCMsAgentsInDefaultMode(t *testing.T) {
	roles, registration, work, err := klusterletObjects(moduleDir(t), "baton.local/ocm:test", "site-b")
	if err != nil {
		t.Fatal(err)
	}
	var r, w appsv1.Deployment
	for _, pair := range []struct {
		from *unstructured.Unstructured
		to   *appsv1.Deployment
	}{{registration, &r}, {work, &w}} {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(pair.from.Object, pair.to); err != nil {
			t.Fatal(err)
		}
	}
	rc, wc := r.Spec.Template.Spec.Containers[0], w.Spec.Template.Spec.Containers[0]
	if r.Namespace != AgentNamespace || !slices.Equal(rc.Args[:4], []string{"/registration", "agent", "--spoke-cluster-name=site-b",
		"--bootstrap-kubeconfig=/spoke/bootstrap/kubeconfig"}) {
		t.Errorf("the registration agent in %s runs %v", r.Namespace, rc.Args)
	}
	if !slices.ContainsFunc(r.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == BootstrapSecret
	}) {
		t.Errorf("the registration agent does not mount %s: %+v", BootstrapSecret, r.Spec.Template.Spec.Volumes)
	}
	for _, arg := range []string{"--spoke-cluster-name=site-b", "--workload-source-config=/spoke/hub-kubeconfig/kubeconfig",
		"--status-sync-interval=" + workStatusSyncInterval, "--agent-id=" + agentID("site-b")} {
		if !slices.Contains(wc.Args, arg) {
			t.Errorf("the work agent's args %v lack %s", wc.Args, arg)
		}
	}
	if !slices.ContainsFunc(w.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == HubKubeconfigSecret
	}) || w.Spec.Template.Spec.ServiceAccountName != "klusterlet-work-sa" {
		t.Errorf("the work agent: account %s, volumes %+v", w.Spec.Template.Spec.ServiceAccountName, w.Spec.Template.Spec.Volumes)
	}
	// The work agent may apply what OCM grants it (admin, aggregated);
	// baton's kinds are granted in the site's namespace alone.
	admin := find[rbacv1.ClusterRoleBinding](t, roles, "ClusterRoleBinding", "", "open-cluster-management:klusterlet-work:execution-admin")
	if admin.RoleRef.Name != "admin" || admin.Subjects[0].Name != "klusterlet-work-sa" {
		t.Errorf("the work agent's execution binding %+v", admin)
	}
	execution, err := workExecutionObjects("baton-system")
	if err != nil {
		t.Fatal(err)
	}
	role := find[rbacv1.Role](t, execution, "Role", "baton-system", workExecution)
	grant := find[rbacv1.RoleBinding](t, execution, "RoleBinding", "baton-system", workExecution)
	if !hasRule(role.Rules, "storage.baton.dev", "operatorops", "create") || hasRule(role.Rules, "storage.baton.dev", "storageclusters", "create") ||
		grant.Subjects[0].Name != "klusterlet-work-sa" || grant.Subjects[0].Namespace != AgentNamespace {
		t.Errorf("baton's grant to the work agent: %+v, %+v", role.Rules, grant.Subjects)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(agentID("site-b")) ||
		agentID("site-b") == agentID("site-a") {
		t.Errorf("agent ids %s, %s", agentID("site-b"), agentID("site-a"))
	}
}

func TestTheViewAgentSeesOnlyWhatTheHubViews(t *testing.T) {
	site, err := viewAgentSiteObjects("baton.local/baton:test", "site-b", "baton-system")
	if err != nil {
		t.Fatal(err)
	}
	role := find[rbacv1.Role](t, site, "Role", "baton-system", ViewAgent)
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, []string{"get"}) || slices.Contains(role.Rules[0].Resources, "secrets") {
		t.Errorf("the view agent's site role %+v", role.Rules)
	}
	d := find[appsv1.Deployment](t, site, "Deployment", AgentNamespace, ViewAgent)
	c := d.Spec.Template.Spec.Containers[0]
	if !slices.Equal(c.Command, []string{"baton-view-agent"}) || !slices.Contains(c.Args, "--cluster-name=site-b") ||
		d.Spec.Template.Spec.Volumes[0].Secret.SecretName != HubKubeconfigSecret || *c.SecurityContext.RunAsUser == 0 {
		t.Errorf("the view agent runs %v %v with %+v", c.Command, c.Args, d.Spec.Template.Spec.Volumes)
	}
	hub, err := viewAgentHubObjects("site-b")
	if err != nil {
		t.Fatal(err)
	}
	hubRole := find[rbacv1.Role](t, hub, "Role", "site-b", "baton:view-agent")
	binding := find[rbacv1.RoleBinding](t, hub, "RoleBinding", "site-b", "baton:view-agent")
	if !hasRule(hubRole.Rules, "view.open-cluster-management.io", "managedclusterviews/status", "update") ||
		hasRule(hubRole.Rules, "view.open-cluster-management.io", "managedclusterviews", "create") ||
		binding.Subjects[0].Name != "system:open-cluster-management:site-b" {
		t.Errorf("the view agent's hub role %+v bound to %+v", hubRole.Rules, binding.Subjects)
	}
}

func TestBatonHubRunsWithItsGeneratedRole(t *testing.T) {
	objects, err := batonHubObjects("baton.local/baton:test")
	if err != nil {
		t.Fatal(err)
	}
	role := find[rbacv1.ClusterRole](t, objects, "ClusterRole", "", "baton-hub")
	if !hasRule(role.Rules, "work.open-cluster-management.io", "manifestworks", "create") || hasRule(role.Rules, "", "secrets", "get") {
		t.Errorf("baton-hub's role %+v", role.Rules)
	}
	d := find[appsv1.Deployment](t, objects, "Deployment", HubControllerNamespace, "baton-hub")
	if d.Spec.Template.Spec.ServiceAccountName != "baton-hub" || d.Spec.Template.Spec.Containers[0].Image != "baton.local/baton:test" {
		t.Errorf("baton-hub's Deployment %+v", d.Spec.Template.Spec)
	}
	crds, err := batonHubCRDs()
	if err != nil || len(crds) != 3 {
		t.Fatalf("baton-hub's CRDs: %d, %v", len(crds), err)
	}
}

func TestATemplateReadingAFieldTheConfigLacksFails(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .KlusterletName }}-{{ .NoSuchField }}\n"
	if err := os.WriteFile(filepath.Join(dir, "manifests", "x.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := render(dir, "x.yaml", newKlusterletConfig("image", "site-a"))
	if err == nil || !strings.Contains(err.Error(), "NoSuchField") {
		t.Errorf("rendering a template that reads a missing field: %v", err)
	}
}

func TestTheImageScriptPinsThisVersion(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repositoryRoot(), "ci", "realbed", "ocm.go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "require "+Module+" "+Version+"\n") {
		t.Errorf("ci/realbed/ocm.go.mod does not pin %s %s", Module, Version)
	}
}
