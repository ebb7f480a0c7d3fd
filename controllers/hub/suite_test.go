package hub

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
)

// The envtest suite shares one kube-apiserver and etcd across the package's
// tests, with baton's CRDs, OCM's ManifestWork and ManagedCluster CRDs (as
// the open-cluster-management.io/api module ships them) and the
// ManagedClusterView CRD generated beside these tests.
var server = controlplanetest.Shared{CRDs: func() ([]string, error) {
	crds, err := ocmCRDs()
	return append(crds, filepath.Join(repositoryRoot(), "deploy", "crds"), filepath.Join(repositoryRoot(), "controllers", "hub", "testdata", "crds")), err
}, Kinds: []func(*runtime.Scheme) error{AddToScheme}}

// repositoryRoot is found from this file's path, whatever the working directory.
func repositoryRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// ocmCRDs are the CRD manifests of ManifestWork and ManagedCluster inside the
// module cache's copy of open-cluster-management.io/api.
func ocmCRDs() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "open-cluster-management.io/api").Output()
	if err != nil {
		return nil, fmt.Errorf("failed to find open-cluster-management.io/api in the module cache: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	files := []string{
		filepath.Join(dir, "work", "v1", "0000_00_work.open-cluster-management.io_manifestworks.crd.yaml"),
		filepath.Join(dir, "cluster", "v1", "0000_00_clusters.open-cluster-management.io_managedclusters.crd.yaml"),
	}
	for _, file := range files {
		if _, err := os.Stat(file); err != nil {
			return nil, fmt.Errorf("the OCM module has no %s: %w", filepath.Base(file), err)
		}
	}
	return files, nil
}

// hubConfig returns the admin config of the shared control plane, starting it
// on first use. Tests that need it are skipped under -short.
func hubConfig(t *testing.T) *rest.Config { return server.Config(t) }

func TestMain(m *testing.M) { server.Main(m) }

func envScheme(t *testing.T) *runtime.Scheme { return controlplanetest.Scheme(t, server.Kinds...) }

// envClient is an admin client of the shared control plane.
func envClient(t *testing.T) client.Client { return server.Client(t) }

// testContext bounds a test well above what it needs, so a wedged API server
// fails the test instead of hanging it.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// registerSite creates an accepted ManagedCluster and its namespace on the hub,
// as OCM's registration does.
func registerSite(t *testing.T, c client.Client, site string, accepted bool) {
	t.Helper()
	ctx := testContext(t)
	cluster := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: site}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted}}
	if err := c.Create(ctx, cluster); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create ManagedCluster %s: %v", site, err)
	}
	ensureNamespace(t, c, site)
}

func ensureNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(testContext(t), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// eventually polls check until it holds, within a bound far above what it
// needs: it is how a test waits for a controller running in its own
// goroutines, never a timing assertion.
func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(testContext(t), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, state := check()
		last = state
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within a minute (%v); last seen: %s", what, err, last)
	}
}
