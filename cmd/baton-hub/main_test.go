package main

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/hub"
	"github.com/baton-dr/baton/internal/syncio"
)

func TestHelpNamesEveryFlagAndExitsZero(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--help exited %d: %s", code, stderr.String())
	}
	for _, want := range []string{"-kubeconfig", "-metrics-bind-address", "-health-probe-bind-address", "-leader-elect",
		"-leader-election-namespace", "KUBECONFIG", hub.FieldManager, "ManifestWork", "ManagedClusterView"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help does not mention %s:\n%s", want, stdout.String())
		}
	}
}

func TestBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{{"--no-such-flag"}, {"extra-argument"}, {"--leader-elect=maybe"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%v exited %d, want 2", args, code)
		}
	}
}

func TestAMissingKubeconfigFails(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--kubeconfig", filepath.Join(t.TempDir(), "none"), "--metrics-bind-address", "0"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "kubeconfig") {
		t.Errorf("exited %d with %q, want 1 and the kubeconfig named", code, stderr.String())
	}
}

func repositoryRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// startHub starts a control plane with baton's CRDs, OCM's ManifestWork and
// ManagedCluster CRDs (from the module cache) and the view CRD.
func startHub(t *testing.T) *rest.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and etcd; skipped under -short")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "open-cluster-management.io/api").Output()
	if err != nil {
		t.Fatal(err)
	}
	ocm := strings.TrimSpace(string(out))
	return controlplanetest.Start(t,
		filepath.Join(ocm, "work", "v1", "0000_00_work.open-cluster-management.io_manifestworks.crd.yaml"),
		filepath.Join(ocm, "cluster", "v1", "0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml"),
		filepath.Join(repositoryRoot(), "deploy", "crds"),
		filepath.Join(repositoryRoot(), "controllers", "hub", "testdata", "crds"))
}

// serviceAccountKubeconfig writes a kubeconfig that reaches the control plane
// with the admin's certificate but acts as the hub's service account, so the
// controller runs with deploy/hub's RBAC and nothing more.
func serviceAccountKubeconfig(t *testing.T, config *rest.Config) string {
	t.Helper()
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["hub"] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthorityData: config.CAData}
	kubeconfig.AuthInfos["baton-hub"] = &clientcmdapi.AuthInfo{ClientCertificateData: config.CertData, ClientKeyData: config.KeyData,
		Impersonate: "system:serviceaccount:baton-hub:baton-hub"}
	kubeconfig.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "baton-hub"}
	kubeconfig.CurrentContext = "hub"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTheHubRunsOnARealAPIServerWithItsOwnRBAC starts baton-hub as its
// service account, bound to deploy/hub's roles, with leader election: a
// request gets its work and its finalizer, and the site's answer (the work
// applied) reaches the request's status through the watch on the work.
func TestTheHubRunsOnARealAPIServerWithItsOwnRBAC(t *testing.T) {
	config := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := hub.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"deploy/hub/hub.yaml", "deploy/hub/rbac/role.yaml"} {
		controlplanetest.Apply(t, ctx, admin, filepath.Join(repositoryRoot(), file))
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "site-a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "storage"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "site-a"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	logs := &syncio.Buffer{}
	done := make(chan int, 1)
	runCtx, stop := context.WithCancel(ctx)
	go func() {
		done <- run(runCtx, []string{"--kubeconfig", serviceAccountKubeconfig(t, config), "--leader-elect",
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, io.Discard, logs)
	}()

	request := &v1.StorageSiteDeployment{ObjectMeta: metav1.ObjectMeta{Name: "site-a", Namespace: "storage"},
		Spec: v1.StorageSiteDeploymentSpec{Site: "site-a", Sizing: &v1.Sizing{ClusterName: "site-a", StorageLayout: v1.StorageLayout{Pool: v1.PoolLayout{Name: "baton"}}}}}
	if err := admin.Create(ctx, request); err != nil {
		t.Fatal(err)
	}
	var works workv1.ManifestWorkList
	poll(t, ctx, logs, "the hub writes the request's work", func() bool {
		return admin.List(ctx, &works, client.InNamespace("site-a")) == nil && len(works.Items) == 1
	})
	work := &works.Items[0]
	if work.Spec.DeleteOption == nil || work.Spec.DeleteOption.PropagationPolicy != workv1.DeletePropagationPolicyTypeOrphan {
		t.Errorf("the work's deleteOption is %+v, want Orphan", work.Spec.DeleteOption)
	}

	// The site's agent applies the work: the request hears of it through the
	// watch, well before the 15 s requeue.
	meta.SetStatusCondition(&work.Status.Conditions, metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue,
		Reason: "AppliedManifestWorkComplete", Message: "Apply manifest work complete", ObservedGeneration: work.Generation})
	if err := admin.Status().Update(ctx, work); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, logs, "the request reports the work delivered", func() bool {
		if admin.Get(ctx, client.ObjectKeyFromObject(request), request) != nil {
			return false
		}
		c := meta.FindStatusCondition(request.Status.Conditions, v1.StorageSiteDeploymentDeliveredCondition)
		return c != nil && c.Status == metav1.ConditionTrue && request.Status.Phase == v1.StorageSiteDeploymentDiscovering
	})
	if !strings.Contains(strings.Join(request.Finalizers, ","), hub.DeploymentFinalizer) {
		t.Errorf("finalizers %v", request.Finalizers)
	}

	if err := admin.Delete(ctx, request); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, logs, "the hub releases the request", func() bool {
		err := admin.Get(ctx, client.ObjectKeyFromObject(request), &v1.StorageSiteDeployment{})
		return apierrors.IsNotFound(err) && admin.List(ctx, &works, client.InNamespace("site-a")) == nil && len(works.Items) == 0
	})

	stop()
	if code := <-done; code != 0 {
		t.Errorf("baton-hub exited %d after its context ended; log:\n%s", code, logs.String())
	}
	if strings.Contains(logs.String(), "forbidden") {
		t.Errorf("the hub's RBAC is short of something:\n%s", logs.String())
	}
}

// poll waits for an eventual state of a controller running in its own
// goroutines, bounded well above what it needs.
func poll(t *testing.T, ctx context.Context, logs *syncio.Buffer, what string, check func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return check(), nil
	})
	if err != nil {
		t.Fatalf("%s: %v; the hub's log:\n%s", what, err, logs.String())
	}
}
