package chart_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
	site "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/deploy/chart"
	"github.com/baton-dr/baton/internal/pki"
	"github.com/baton-dr/baton/storageapi"
)

// The package's install tests share one real kube-apiserver; the chart's
// CRDs are not preinstalled: installing them is what is tested.
var server = controlplanetest.Shared{
	CRDs:  func() ([]string, error) { return nil, nil },
	Kinds: []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme},
}

func TestMain(m *testing.M) { server.Main(m) }

// apiServer returns an admin config of the shared control plane and its
// client, which knows CRDs. Skipped under -short.
func apiServer(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	return server.Config(t), server.Client(t)
}

// withTLS has the chart make the certificate secrets: a CA, the storage
// API's certificate naming its Service and the NodePort host, the stream
// certificate naming the node.
func withTLS(t *testing.T, v chart.Values) chart.Values {
	t.Helper()
	ca, err := pki.NewCA("baton-test-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(name string, dns []string, ip string) *pki.Leaf {
		ips, err := pki.IPs(ip)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := ca.Issue(name, pki.Names{DNS: dns, IPs: ips})
		if err != nil {
			t.Fatal(err)
		}
		return leaf
	}
	api := issue("baton-controller", []string{"baton-controller.baton-system.svc"}, v.CrossSite.Host)
	stream := issue("baton-node", nil, v.Storage.Nodes[0].Address)
	v.TLS.Create, v.TLS.CA = true, string(ca.CertPEM)
	v.TLS.StorageAPICert, v.TLS.StorageAPIKey = string(api.CertPEM), string(api.KeyPEM)
	v.TLS.StreamCert, v.TLS.StreamKey = string(stream.CertPEM), string(stream.KeyPEM)
	return v
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var gvks = map[string]schema.GroupVersionKind{
	"VolumeReplicationClass": {Group: "replication.storage.openshift.io", Version: "v1alpha1", Kind: "VolumeReplicationClass"},
	"StorageCluster":         {Group: "storage.baton.dev", Version: "v1alpha1", Kind: "StorageCluster"},
	"StorageNode":            {Group: "storage.baton.dev", Version: "v1alpha1", Kind: "StorageNode"},
	"Deployment":             {Group: "apps", Version: "v1", Kind: "Deployment"},
	"DaemonSet":              {Group: "apps", Version: "v1", Kind: "DaemonSet"},
}

func get(ctx context.Context, c client.Client, kind, namespace, name string) (*unstructured.Unstructured, error) {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(gvks[kind])
	return o, c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, o)
}

// TestTheChartInstallsUpgradesAndUninstallsOnARealAPIServer installs the
// chart through Helm's Go API into a real kube-apiserver (no kubelet: the
// pods never run), and checks what the server accepted: the CRDs
// established, the VolumeReplicationClass, the StorageCluster with the
// server's defaults, the NodePorts, the RBAC as the server decides it; then
// upgrades it (a new peer), sees the server refuse a change of the
// replication class's immutable parameters, recovers, and uninstalls.
func TestTheChartInstallsUpgradesAndUninstallsOnARealAPIServer(t *testing.T) {
	config, c := apiServer(t)
	ctx := testContext(t)
	target := chart.Target{Config: config, Timeout: time.Minute, Log: t.Logf}
	values := withTLS(t, btrfsValues(t))

	rel, err := chart.Install(ctx, target, values)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != 1 || rel.Info.Status != "deployed" {
		t.Fatalf("release %s revision %d", rel.Info.Status, rel.Version)
	}
	rendered := render(t, values)
	for _, crd := range rendered.CRDs {
		var got apiextensionsv1.CustomResourceDefinition
		if err := c.Get(ctx, client.ObjectKey{Name: crd.GetName()}, &got); err != nil {
			t.Fatalf("CRD %s: %v", crd.GetName(), err)
		}
		if !apihelpers.IsCRDConditionTrue(&got, apiextensionsv1.Established) {
			t.Errorf("CRD %s is not established", crd.GetName())
		}
	}
	for _, o := range rendered.Objects {
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), probe); err != nil {
			t.Errorf("%s %s was not created: %v", o.GetKind(), o.GetName(), err)
		}
	}
	vrc, err := get(ctx, c, "VolumeReplicationClass", "", "baton")
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedString(vrc.Object, "spec", "provisioner"); p != "csi.baton-dr.io" {
		t.Errorf("the VolumeReplicationClass's provisioner is %q", p)
	}
	cluster, err := get(ctx, c, "StorageCluster", chart.DefaultNamespace, "baton-site-a")
	if err != nil {
		t.Fatal(err)
	}
	if min, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "drbdPorts", "min"); min != 7000 {
		t.Errorf("the StorageCluster lacks the server's defaults (drbdPorts.min %d): %v", min, cluster.Object["spec"])
	}
	var api corev1.Service
	if err := c.Get(ctx, client.ObjectKey{Namespace: chart.DefaultNamespace, Name: "baton-controller"}, &api); err != nil {
		t.Fatal(err)
	}
	if api.Spec.Type != corev1.ServiceTypeNodePort || api.Spec.Ports[0].NodePort != 30443 {
		t.Errorf("the storage API's Service is %s %+v", api.Spec.Type, api.Spec.Ports)
	}
	checkAccess(t, ctx, c)
	operator, asOperator := checkPeers(t, ctx, target, values)

	// An upgrade: a second peer, a louder operator.
	values.Peers = append(values.Peers, chart.Peer{ClusterID: "0000000c-0000-4000-8000-00000000000c", Endpoint: "https://172.18.0.6:30443", Secret: "token-c"})
	values.Operator.LogLevel = 1
	if rel, err = chart.Apply(ctx, target, values); err != nil {
		t.Fatal(err)
	}
	if rel.Version != 2 {
		t.Fatalf("the upgrade is revision %d", rel.Version)
	}
	var peers corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: chart.DefaultNamespace, Name: "baton-peers"}, &peers); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(peers.Data["clusters"]), "0000000c-0000-4000-8000-00000000000c") {
		t.Errorf("the peers secret after the upgrade: %s", peers.Data["clusters"])
	}
	if _, err := operator.Reconcile(ctx, ctrl.Request{}); err != nil {
		t.Fatal(err)
	}
	if entry, ok := csiClusters(t, ctx, asOperator, values).Entry("0000000c-0000-4000-8000-00000000000c"); !ok || entry.Local {
		t.Errorf("the operator did not register the peer the upgrade added: %v (found %v)", entry, ok)
	}
	deployment, err := get(ctx, c, "Deployment", chart.DefaultNamespace, "baton-controller")
	if err != nil {
		t.Fatal(err)
	}
	args, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
	if !strings.Contains(fmt.Sprint(args), "--v=1") {
		t.Errorf("the operator's args after the upgrade: %v", args)
	}

	// The replication class's parameters are immutable: the server refuses,
	// Helm says so, and the next upgrade with the old class goes through.
	changed := values
	changed.VolumeReplicationClass.TargetClusterID = siteB
	if _, err := chart.Upgrade(ctx, target, changed); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Fatalf("changing the replication class's parameters: %v", err)
	}
	if rel, err = chart.Apply(ctx, target, values); err != nil || rel.Info.Status != "deployed" {
		t.Fatalf("upgrading after the refusal: %v", err)
	}

	if err := chart.Uninstall(ctx, target); err != nil {
		t.Fatal(err)
	}
	if _, err := get(ctx, c, "Deployment", chart.DefaultNamespace, "baton-controller"); !apierrors.IsNotFound(err) {
		t.Errorf("the operator's Deployment after uninstall: %v", err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: "storageclusters.storage.baton.dev"}, &crd); err != nil {
		t.Errorf("the CRDs went with the release: %v", err)
	}
	if rel, err = chart.Apply(ctx, target, values); err != nil || rel.Version != 1 {
		t.Fatalf("installing again after uninstall: %v", err)
	}
	if err := chart.Uninstall(ctx, target); err != nil {
		t.Fatal(err)
	}
}

// checkPeers runs the operator's CSI secret reconciler (controllers/site,
// as baton-controller runs it with the flags the chart gives) once: the CSI
// secret gets the local entry and the peer of the chart's peers secret, and
// LocalPeer reads the local entry back for the other site's values.
func checkPeers(t *testing.T, ctx context.Context, target chart.Target, values chart.Values) (*site.CSISecretReconciler, client.Client) {
	t.Helper()
	if _, err := chart.LocalPeer(ctx, target, values); err == nil {
		t.Fatal("LocalPeer answers before the operator wrote the CSI secret")
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(target.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	operator := &site.CSISecretReconciler{Client: c, Namespace: chart.DefaultNamespace, SecretName: values.Secrets.CSI,
		PeersSecretName: values.Secrets.Peers, Endpoint: "https://" + values.CrossSite.Host + ":30443", Random: rand.Reader}
	if _, err := operator.Reconcile(ctx, ctrl.Request{}); err != nil {
		t.Fatal(err)
	}
	local, err := chart.LocalPeer(ctx, target, values)
	if err != nil {
		t.Fatal(err)
	}
	if local.ClusterID != siteA || local.Endpoint != "https://172.18.0.3:30443" || len(local.Secret) != 64 {
		t.Errorf("the local entry: %s at %s, a secret of %d characters", local.ClusterID, local.Endpoint, len(local.Secret))
	}
	clusters := csiClusters(t, ctx, c, values)
	peer, ok := clusters.Entry(siteB)
	if !ok || peer.Local || peer.Secret != tokenB || peer.Endpoint != "https://172.18.0.4:30443" {
		t.Errorf("the CSI secret's entry of the peer: %v (found %v)", peer, ok)
	}
	return operator, c
}

func csiClusters(t *testing.T, ctx context.Context, c client.Client, values chart.Values) storageapi.Clusters {
	t.Helper()
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: chart.DefaultNamespace, Name: values.Secrets.CSI}, &secret); err != nil {
		t.Fatal(err)
	}
	clusters, err := storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
	if err != nil {
		t.Fatal(err)
	}
	return clusters
}

// checkAccess asks the server what the chart's accounts may do.
func checkAccess(t *testing.T, ctx context.Context, c client.Client) {
	t.Helper()
	account := func(name string) string { return "system:serviceaccount:" + chart.DefaultNamespace + ":" + name }
	for _, check := range []struct {
		user, verb, group, resource, namespace, name string
		allowed                                      bool
	}{
		{account("baton-node"), "get", "", "secrets", chart.DefaultNamespace, "baton-csi", false},
		{account("baton-node"), "list", "", "pods", chart.DefaultNamespace, "", false},
		{account("baton-csi-controller"), "get", "", "secrets", chart.DefaultNamespace, "baton-csi", true},
		{account("baton-csi-controller"), "get", "", "secrets", chart.DefaultNamespace, "baton-peers", false},
		{account("baton-csi-controller"), "create", "persistentvolumes", "", "", "", false},
		{account("baton-csi-controller"), "create", "", "persistentvolumes", "", "", true},
		{account("baton-csi-controller"), "create", "csiaddons.openshift.io", "csiaddonsnodes", chart.DefaultNamespace, "", true},
		{account("baton-csi-controller"), "create", "csiaddons.openshift.io", "csiaddonsnodes", "default", "", false},
		{account("baton-csi-addons-manager"), "update", "replication.storage.openshift.io", "volumereplications/status", "app", "", true},
		{account("baton-csi-addons-manager"), "get", "", "secrets", chart.DefaultNamespace, "baton-csi", false},
		{account("baton-controller"), "update", "storage.baton.dev", "storageclusters/status", chart.DefaultNamespace, "", true},
		{account("baton-controller"), "get", "", "secrets", "default", "", false},
	} {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: check.user,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + chart.DefaultNamespace, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: check.verb, Group: check.group, Resource: check.resource,
				Namespace: check.namespace, Name: check.name}}}
		if err := c.Create(ctx, review); err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != check.allowed {
			t.Errorf("%s %s %s/%s in %q (%s): allowed %v, want %v (%s)", check.user, check.verb, check.group, check.resource,
				check.namespace, check.name, review.Status.Allowed, check.allowed, review.Status.Reason)
		}
	}
}

// TestAZFSDRBDInstallStopsAtTheModuleCheck: the pre-install check's pod
// holds the install; when it fails (here the test writes the status kubelet
// would write: this API server has no kubelet -- a test double for the
// node), the install fails naming the node and the modules it lacks, and no
// workload was created.
func TestAZFSDRBDInstallStopsAtTheModuleCheck(t *testing.T) {
	config, c := apiServer(t)
	ctx := testContext(t)
	namespace := "baton-zfs"
	target := chart.Target{Config: config, Release: chart.Release{Name: "baton-zfs", Namespace: namespace}, Timeout: time.Minute, Log: t.Logf}
	values := zfsValues(t)
	const said = "baton: storage.mode=zfs-drbd: node baton-site-a-control-plane (kernel 6.1.0) lacks the kernel modules: zfs drbd"
	kubelet := make(chan error, 1)
	go func() {
		kubelet <- wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			var pod corev1.Pod
			if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "baton-preflight-0"}, &pod); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			pod.Status.Phase = corev1.PodFailed
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "check-modules", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: said + "\n", FinishedAt: metav1.Now()}}}}
			return true, c.Status().Update(ctx, &pod)
		})
	}()
	_, err := chart.Install(ctx, target, values)
	if kerr := <-kubelet; kerr != nil {
		t.Fatalf("playing kubelet: %v", kerr)
	}
	if err == nil || !strings.Contains(err.Error(), said) {
		t.Fatalf("the install did not stop at the module check: %v", err)
	}
	if _, err := get(ctx, c, "DaemonSet", namespace, "baton-node"); !apierrors.IsNotFound(err) {
		t.Errorf("the node DaemonSet exists after the failed check: %v", err)
	}
	if err := chart.Uninstall(ctx, target); err != nil {
		t.Fatal(err)
	}
}
