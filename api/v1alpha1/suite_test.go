package v1alpha1_test

import (
	"context"
	"path/filepath"
	goruntime "runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
)

// The envtest suite shares one kube-apiserver and etcd across the package's
// tests: starting one costs seconds, and every test works in its own namespace.
var server = controlplanetest.Shared{
	CRDs:  func() ([]string, error) { return []string{crdDirectory()}, nil },
	Kinds: schemeKinds,
}

// schemeKinds are the kinds the tests' clients know beside client-go's.
var schemeKinds = []func(*runtime.Scheme) error{apiextensionsv1.AddToScheme, storagev1alpha1.AddToScheme}

// repositoryRoot is found from this file's path, so the tests find deploy/crds
// and the Makefile whatever their working directory.
func repositoryRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func crdDirectory() string { return filepath.Join(repositoryRoot(), "deploy", "crds") }

// apiServer returns a client of the shared control plane, which has the CRDs of
// deploy/crds installed; it starts the control plane on first use. Tests that
// need it are skipped under -short.
func apiServer(t *testing.T) client.Client { return server.Client(t) }

func TestMain(m *testing.M) { server.Main(m) }

// testContext is a context bounded well above what any one test needs, so a
// wedged API server fails the test instead of hanging it.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newNamespace creates a namespace for one test's objects.
func newNamespace(t *testing.T, c client.Client, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(testContext(t), ns); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}
