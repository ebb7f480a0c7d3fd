package site_test

import (
	"context"
	"fmt"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
)

// The envtest suite shares one kube-apiserver and etcd, with deploy/crds
// installed, across the package's tests; every test works in its own
// namespace. TestMain stops it.
var server = controlplanetest.Shared{
	CRDs: func() ([]string, error) {
		return []string{filepath.Join(repositoryRoot(), "deploy", "crds")}, nil
	},
	Kinds: []func(*runtime.Scheme) error{v1.AddToScheme},
}

func repositoryRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func newScheme(t testing.TB) *runtime.Scheme { return controlplanetest.Scheme(t, server.Kinds...) }

// apiServer returns a client of the shared control plane. Skipped under
// -short.
func apiServer(t *testing.T) client.Client { return server.Client(t) }

func TestMain(m *testing.M) { server.Main(m) }

// statusKinds are the kinds whose status is a subresource, for the fake client.
func statusKinds() []client.Object {
	return []client.Object{&v1.Volume{}, &v1.Replication{}, &v1.Replica{}, &v1.StorageNode{}, &v1.StorageCluster{},
		&v1.OperatorOps{}, &v1.ClusterDeploymentConfig{}, &v1.TestFailover{}, &v1.Snapshot{}}
}

// fakeClient is controller-runtime's fake client with the status
// subresources the CRDs declare.
func fakeClient(t testing.TB, objects ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(newScheme(t)).WithStatusSubresource(statusKinds()...).
		WithObjects(objects...).Build()
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var namespaces atomic.Int64

// newNamespace creates a namespace named after the test on the API server.
func newNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + fmt.Sprintf("-%d", namespaces.Add(1))
	if err := c.Create(testContext(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// clientKind is a client of one kind: the fake client, or a real API server.
type clientKind struct {
	name string
	// client returns a client and a namespace for one test.
	client func(t *testing.T) (client.Client, string)
}

func backends() []clientKind {
	return []clientKind{
		{"fake", func(t *testing.T) (client.Client, string) { return fakeClient(t), "baton" }},
		{"apiserver", func(t *testing.T) (client.Client, string) { c := apiServer(t); return c, newNamespace(t, c) }},
	}
}
