package webapps

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed/controlplane"
)

func testWordPressSpec() WordPressSpec {
	rng := rand.New(rand.NewPCG(1, 2))
	return WordPressSpec{
		Name:      "wordpress",
		Placement: Placement{Namespace: "apps", StorageClass: "baton", NodePort: 30080},
		Database:  Claim{Name: "wordpress-db"}, Uploads: Claim{Name: "wordpress-uploads"},
		MariaDBImage: "baton.local/mariadb:0", WordPressImage: "baton.local/wordpress:0",
		DatabasePassword: Password(rng), AdminPassword: Password(rng), AppPassword: Password(rng),
	}
}

func testGiteaSpec() GiteaSpec {
	return GiteaSpec{
		Name:         "gitea",
		Placement:    Placement{Namespace: "apps", StorageClass: "baton", NodePort: 30300},
		Repositories: Claim{Name: "gitea-repositories"}, Database: Claim{Name: "gitea-db"},
		Image: "baton.local/gitea:0", AdminPassword: Password(rand.New(rand.NewPCG(3, 4))),
	}
}

func TestWordPressObjectsShape(t *testing.T) {
	o, err := WordPressObjects(testWordPressSpec())
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Secrets) != 1 || len(o.Claims) != 2 || len(o.Deployments) != 2 || len(o.Services) != 2 {
		t.Fatalf("objects: %d secrets, %d claims, %d deployments, %d services", len(o.Secrets), len(o.Claims), len(o.Deployments), len(o.Services))
	}
	for _, d := range o.Deployments {
		if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("%s: %d replicas, strategy %s; want one pod, Recreate", d.Name, *d.Spec.Replicas, d.Spec.Strategy.Type)
		}
		if c := d.Spec.Template.Spec.Containers[0]; c.ReadinessProbe == nil {
			t.Errorf("%s: no readiness probe", d.Name)
		}
	}
	db := o.Deployments[0].Spec.Template.Spec
	if m := db.Containers[0].VolumeMounts[0]; m.MountPath != "/var/lib/mysql" || m.SubPath != "mysql" ||
		db.Volumes[0].PersistentVolumeClaim.ClaimName != "wordpress-db" {
		t.Errorf("MariaDB's datadir: mount %+v, volume %+v", m, db.Volumes[0])
	}
	web := o.Deployments[1].Spec.Template.Spec
	if web.Volumes[0].PersistentVolumeClaim.ClaimName != "wordpress-uploads" {
		t.Errorf("uploads volume %+v", web.Volumes[0])
	}
	if s := o.Services[1]; s.Spec.Type != corev1.ServiceTypeNodePort || s.Spec.Ports[0].NodePort != 30080 {
		t.Errorf("web service %+v", s.Spec)
	}
	if s := o.Services[0]; s.Spec.Type != "" || s.Name != "wordpress-db" {
		t.Errorf("database service %s %+v, want ClusterIP wordpress-db", s.Name, s.Spec)
	}
	if *o.Claims[0].Spec.StorageClassName != "baton" {
		t.Errorf("claim's class %q", *o.Claims[0].Spec.StorageClassName)
	}
}

func TestObjectsRefuseBadSpecs(t *testing.T) {
	bad := map[string]func(*WordPressSpec){
		"NodePort":       func(s *WordPressSpec) { s.Placement.NodePort = 80 },
		"distinct claim": func(s *WordPressSpec) { s.Uploads.Name = s.Database.Name },
		"letters":        func(s *WordPressSpec) { s.AppPassword = "short'quote" + s.AppPassword },
		"12 characters":  func(s *WordPressSpec) { s.AdminPassword = "abc" },
		"StorageClass":   func(s *WordPressSpec) { s.Placement.StorageClass = "" },
		"instance name":  func(s *WordPressSpec) { s.Name = "Word Press" },
	}
	for want, change := range bad {
		s := testWordPressSpec()
		change(&s)
		if _, err := WordPressObjects(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v", want, err)
		}
	}
	s := testWordPressSpec()
	s.Placement.ExistingClaims, s.Placement.StorageClass = true, ""
	if o, err := WordPressObjects(s); err != nil || len(o.Claims) != 0 {
		t.Errorf("existing claims: %d claims built, %v", len(o.Claims), err)
	}
	g := testGiteaSpec()
	g.Database.Name = g.Repositories.Name
	if _, err := GiteaObjects(g); err == nil {
		t.Error("Gitea with one claim for both volumes was accepted")
	}
}

// TestObjectsAcceptedByAPIServer creates both applications' objects on a
// real kube-apiserver, which validates them as a site's would (probes,
// subPaths, the NodePort range, security contexts), and reads them back.
func TestObjectsAcceptedByAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and etcd; skipped under -short")
	}
	cp, err := controlplane.Start(controlplane.Options{})
	if err != nil {
		t.Fatalf("control plane: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	c, err := ctrlclient.New(cp.Config, ctrlclient.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}}); err != nil {
		t.Fatal(err)
	}
	wp, err := WordPressObjects(testWordPressSpec())
	if err != nil {
		t.Fatal(err)
	}
	gitea, err := GiteaObjects(testGiteaSpec())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range append(wp.All(), gitea.All()...) {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("the API server refused %T %s: %v", o, o.GetName(), err)
		}
	}
	var svc corev1.Service
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "gitea"}, &svc); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.Ports[0].NodePort != 30300 {
		t.Errorf("gitea's NodePort %d after the round trip", svc.Spec.Ports[0].NodePort)
	}
	var d appsv1.Deployment
	if err := c.Get(ctx, types.NamespacedName{Namespace: "apps", Name: "wordpress-db"}, &d); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || d.Spec.Template.Spec.Containers[0].Env[2].ValueFrom == nil {
		t.Errorf("MariaDB's deployment after the round trip: %+v", d.Spec)
	}
}

// A drill's copy runs the same application in its own namespace on its own
// NodePort, with the original's passwords (its database is a clone of the
// original's); the original's objects stay as they were.
func TestPlacedMovesEveryObject(t *testing.T) {
	spec := testWordPressSpec()
	spec.Placement.ExistingClaims = true
	original, err := WordPressObjects(spec)
	if err != nil {
		t.Fatal(err)
	}
	placed := original.Placed("drill-wordpress", 30123)
	if len(placed.All()) != len(original.All()) {
		t.Fatalf("%d objects placed, want %d", len(placed.All()), len(original.All()))
	}
	for _, o := range placed.All() {
		if o.GetNamespace() != "drill-wordpress" {
			t.Errorf("%T %s is in %q, want drill-wordpress", o, o.GetName(), o.GetNamespace())
		}
	}
	for _, o := range original.All() {
		if o.GetNamespace() != "apps" {
			t.Errorf("the original %T %s moved to %q", o, o.GetName(), o.GetNamespace())
		}
	}
	nodePorts := 0
	for i, s := range placed.Services {
		was := original.Services[i].Spec.Ports[0].NodePort
		switch got := s.Spec.Ports[0].NodePort; {
		case was == 0 && got != 0:
			t.Errorf("Service %s got NodePort %d, had none", s.Name, got)
		case was != 0 && got != 30123:
			t.Errorf("Service %s is on NodePort %d, want 30123", s.Name, got)
		case was != 0:
			nodePorts++
		}
	}
	if nodePorts != 1 || original.Services[1].Spec.Ports[0].NodePort != 30080 {
		t.Errorf("%d NodePort Services placed; the original's is on %d", nodePorts, original.Services[1].Spec.Ports[0].NodePort)
	}
	if placed.Secrets[0].StringData["application-password"] != spec.AppPassword {
		t.Error("the copy does not carry the original's application password")
	}
	if cs := placed.Deployments[0].Spec.Template.Spec.Volumes; cs[0].PersistentVolumeClaim.ClaimName != "wordpress-db" {
		t.Errorf("the copy's database mounts %+v, want the claim wordpress-db (the bubble's)", cs[0])
	}
}
