package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane"
	site "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/placement"
	"github.com/baton-dr/baton/storage/replication"
)

// Two sites on one API server (each a kubeconfig context with its own
// namespace, as two clusters would be) and a third context nothing answers
// at. Site A ran A:v1 (reaped) and now A:v3 (active); site B ran B:v2.

const (
	clusterA = "aaaaaaaa-0000-4000-8000-00000000000a"
	clusterB = "bbbbbbbb-0000-4000-8000-00000000000b"
)

var (
	v1Ref = chain.Ref{Cluster: clusterA, Volume: "a0000000-0000-4000-8000-000000000001"}
	v2Ref = chain.Ref{Cluster: clusterB, Volume: "b0000000-0000-4000-8000-000000000002"}
	v3Ref = chain.Ref{Cluster: clusterA, Volume: "a0000000-0000-4000-8000-000000000003"}
)

var fixture struct {
	once       sync.Once
	cp         *controlplane.ControlPlane
	kubeconfig string
	now        time.Time
	err        error
}

// sites starts the control plane and writes the sites once per test binary.
func sites(t *testing.T) (kubeconfig string, now time.Time) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and etcd; skipped under -short")
	}
	fixture.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		fixture.cp, fixture.err = controlplane.Start(controlplane.Options{
			CRDDirectories: []string{filepath.Join(filepath.Dir(file), "..", "..", "deploy", "crds")}})
		if fixture.err == nil {
			fixture.err = writeSites()
		}
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.kubeconfig, fixture.now
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.cp != nil {
		_ = fixture.cp.Stop()
	}
	if fixture.kubeconfig != "" {
		_ = os.RemoveAll(filepath.Dir(fixture.kubeconfig))
	}
	os.Exit(code)
}

func writeSites() error {
	ctx := context.Background()
	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(fixture.cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	for _, ns := range []string{"site-a", "site-b"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	first := &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "site-a", Name: "site-a"},
		Spec: v1.StorageClusterSpec{ClusterID: clusterA, StorageLayout: v1.StorageLayout{Pool: v1.PoolLayout{Name: "baton"}}}}
	if err := c.Create(ctx, first); err != nil {
		return err
	}
	// The ages printed are measured from the first object's creation, so a
	// fixed "now" two hours and thirty seconds later prints 120m for every
	// object made within the next half minute.
	base := first.CreationTimestamp.Time
	fixture.now = base.Add(2*time.Hour + 30*time.Second)
	if err := writeSiteB(ctx, c, base); err != nil {
		return err
	}
	if err := writeSiteA(ctx, c, base); err != nil {
		return err
	}
	fixture.kubeconfig, err = writeKubeconfig()
	return err
}

func store(ctx context.Context, c client.Client, namespace string, cluster chain.ClusterID) (*site.Store, error) {
	return site.NewStore(site.StoreConfig{Client: c, Namespace: namespace, Cluster: cluster, ClusterName: namespace, Context: ctx})
}

func writeSiteA(ctx context.Context, c client.Client, base time.Time) error {
	node := &v1.StorageNode{ObjectMeta: metav1.ObjectMeta{Namespace: "site-a", Name: "a1"},
		Spec: v1.StorageNodeSpec{Cluster: "site-a", NodeName: "worker-1", Address: "10.0.0.11"}}
	if err := c.Create(ctx, node); err != nil {
		return err
	}
	s, err := store(ctx, c, "site-a", clusterA)
	if err != nil {
		return err
	}
	shape := core.Shape{SizeBytes: 1 << 30, PlaceCount: 1, VolumeMode: core.Block}
	allocation := placement.Allocation{Resource: "r", Port: 7000, Minor: 1000, Replicas: []placement.Replica{{Node: "a1"}}}
	volumes := []core.Volume{
		{Member: chain.Member{Ref: v1Ref, Root: v1Ref, Successor: v2Ref, State: chain.Tombstone}, Shape: shape, Name: "pvc-vm",
			Allocation: allocation, Initialized: true},
		{Member: chain.Member{Ref: v3Ref, Root: v1Ref, Generation: 2, Predecessor: v2Ref, State: chain.Active}, Shape: shape,
			Allocation:  placement.Allocation{Resource: "r3", Port: 7001, Minor: 1001, Replicas: []placement.Replica{{Node: "a1"}}},
			Initialized: true},
	}
	for _, v := range volumes {
		if err := s.PutVolume(v); err != nil {
			return err
		}
	}
	taken := base.Add(time.Hour + 54*time.Minute)
	pairings := []core.Pairing{
		{Pairing: replication.Pairing{Source: v1Ref, Target: clusterB, Interval: time.Minute, Retention: 2, Phase: replication.Paused,
			Last: replication.Sync{At: base.Add(time.Hour), Snapshot: "baton-000003", Bytes: 1 << 20}}},
		{Pairing: replication.Pairing{Source: v3Ref, Target: clusterB, Interval: time.Minute, Retention: 2, Phase: replication.Idle,
			Snapshots: []replication.Snapshot{{Name: "baton-000009", GUID: "9", TakenAt: taken, ShippedAt: taken.Add(30 * time.Second)}},
			Last:      replication.Sync{At: taken.Add(30 * time.Second), Snapshot: "baton-000009", Bytes: 4096}},
			Receivers: []core.Receiver{{Node: "b1"}}},
	}
	for _, p := range pairings {
		if err := s.PutPairing(p); err != nil {
			return err
		}
	}
	// The status reconciler's phase, as the running operator would write it.
	for _, phase := range []struct {
		ref   chain.Ref
		phase v1.ReplicationPhase
	}{{v1Ref, v1.ReplicationDisabled}, {v3Ref, v1.ReplicationInSync}} {
		var r v1.Replication
		if err := c.Get(ctx, client.ObjectKey{Namespace: "site-a", Name: string(phase.ref.Volume)}, &r); err != nil {
			return err
		}
		r.Status.Phase = phase.phase
		if err := c.Status().Update(ctx, &r); err != nil {
			return err
		}
	}
	return nil
}

func writeSiteB(ctx context.Context, c client.Client, base time.Time) error {
	cluster := &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "site-b", Name: "site-b"},
		Spec: v1.StorageClusterSpec{ClusterID: clusterB, StorageLayout: v1.StorageLayout{Pool: v1.PoolLayout{Name: "baton"}}}}
	if err := c.Create(ctx, cluster); err != nil {
		return err
	}
	s, err := store(ctx, c, "site-b", clusterB)
	if err != nil {
		return err
	}
	return s.PutVolume(core.Volume{
		Member: chain.Member{Ref: v2Ref, Root: v1Ref, Generation: 1, Predecessor: v1Ref, Successor: v3Ref, State: chain.Demoted},
		Shape:  core.Shape{SizeBytes: 1 << 30, PlaceCount: 1, VolumeMode: core.Block, Provisioning: backend.Thin},
		Allocation: placement.Allocation{Resource: "r2", Port: 7000, Minor: 1000,
			Replicas: []placement.Replica{{Node: "b1"}}}, Initialized: true, CreatedAt: base})
}

// writeKubeconfig writes contexts site-a and site-b (namespaces of the same
// server) and site-c, a server nothing listens at.
func writeKubeconfig() (string, error) {
	dir, err := os.MkdirTemp("", "batonctl")
	if err != nil {
		return "", err
	}
	config := fixture.cp.Config
	k := clientcmdapi.NewConfig()
	k.Clusters["envtest"] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthorityData: config.CAData}
	k.Clusters["gone"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	k.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: config.CertData, ClientKeyData: config.KeyData, Token: config.BearerToken}
	k.Contexts["site-a"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "site-a"}
	k.Contexts["site-b"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "site-b"}
	k.Contexts["site-c"] = &clientcmdapi.Context{Cluster: "gone", AuthInfo: "admin", Namespace: "site-c"}
	k.CurrentContext = "site-a"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*k, path)
}

// batonctl runs the command line with a fixed clock and returns its output.
func runBatonctl(t *testing.T, now time.Time, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand(environment{now: func() time.Time { return now }})
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

// trimmed drops the trailing spaces tabwriter leaves, so golden text can be
// written in the test without them.
func trimmed(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n")
}

func check(t *testing.T, what, got, want string) {
	t.Helper()
	if trimmed(got) != want {
		t.Errorf("%s:\n--- got\n%s\n--- want\n%s", what, trimmed(got), want)
	}
}
