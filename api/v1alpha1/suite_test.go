package v1alpha1_test

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
)

// The envtest suite shares one kube-apiserver and etcd across the package's
// tests: starting one costs seconds, and every test works in its own namespace.
var server = controlplanetest.Shared{CRDs: func() ([]string, error) { return []string{crdDirectory()}, nil }}

// apiClient is the shared control plane's client, made on first use.
var apiClient struct {
	once sync.Once
	c    client.Client
	err  error
}

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
func apiServer(t *testing.T) client.Client {
	t.Helper()
	config := server.Config(t)
	apiClient.once.Do(func() {
		scheme, err := newScheme()
		if err != nil {
			apiClient.err = err
			return
		}
		apiClient.c, apiClient.err = client.New(config, client.Options{Scheme: scheme})
	})
	if apiClient.err != nil {
		t.Fatalf("control plane: %v", apiClient.err)
	}
	return apiClient.c
}

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, storagev1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("failed to build the scheme: %w", err)
		}
	}
	return scheme, nil
}

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
