package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/command"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane"
	site "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/internal/pki"
	"github.com/baton-dr/baton/internal/syncio"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

func TestHelpSaysWhatItDoes(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"site operator", "leader", "-kubeconfig", "-namespace", "-cluster-id", "-leader-elect",
		"-metrics-bind-address", "-storage-api-address", "-tls-secret", "cluster secret"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBadFlagsAreRefused(t *testing.T) {
	for _, args := range [][]string{{"--cluster-id", "SITE-A"}, {"--tick-interval", "0s"}, {"--no-such-flag"}, {"extra"}} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out); !errors.Is(err, command.ErrUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

const namespace = "baton-system"

// TestTheOperatorRunsOnARealAPIServer starts baton-controller against a real
// API server as its own ServiceAccount, bound to nothing but the roles make
// crds generated (deploy/rbac): it takes the lease, writes the CSI secret for
// a new StorageCluster, runs a discovery into a draft, ticks the site, serves
// metrics and the storage API over the TLS secret's certificate, and stops
// cleanly when its context ends.
func TestTheOperatorRunsOnARealAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real kube-apiserver and etcd; skipped under -short")
	}
	cp, err := controlplane.Start(controlplane.Options{CRDDirectories: []string{filepath.Join(repositoryRoot(), "deploy", "crds")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	scheme, err := command.NewScheme(v1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	setUpSite(t, ctx, admin)

	dir := t.TempDir()
	kubeconfig := writeKubeconfig(t, cp.Config, dir, "system:serviceaccount:"+namespace+":baton-controller")
	discovery := filepath.Join(dir, "discovery.json")
	writeFile(t, discovery, `[{"name":"node-1","address":"10.0.0.11","devices":[{"path":"/dev/sdb","type":"Disk","sizeBytes":107374182400}]}]`)
	metricsAddress, apiAddress := freeAddress(t), freeAddress(t)
	operatorConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	asOperator, err := client.New(operatorConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := asOperator.List(ctx, &corev1.PersistentVolumeList{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the operator's identity lists every PV: %v; the test does not run as the ServiceAccount", err)
	}

	operatorCtx, stop := context.WithCancel(ctx)
	var logs syncio.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(operatorCtx, []string{"--kubeconfig", kubeconfig, "--namespace", namespace, "--leader-elect=true",
			"--metrics-bind-address", metricsAddress, "--health-probe-bind-address", "0", "--storage-api-address", apiAddress,
			"--discovery-file", discovery, "--storage-api-endpoint", "https://site-a.example:8443"}, &logs)
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("the operator stopped with %v\n%s", err, logs.String())
		}
	}()

	eventually(t, ctx, "the lease is taken", func() error {
		var lease coordinationv1.Lease
		if err := admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "baton-controller"}, &lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder")
		}
		return nil
	})

	cluster := &v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "site-a"},
		Spec: v1.StorageClusterSpec{ClusterID: "aaaaaaaa-0000-4000-8000-00000000000a", StorageLayout: v1.StorageLayout{
			Pool: v1.PoolLayout{Name: "baton"}}}}
	if err := admin.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the CSI secret lists the cluster", func() error {
		var secret corev1.Secret
		if err := admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "baton-csi"}, &secret); err != nil {
			return err
		}
		var clusters struct {
			Clusters []struct {
				ID       string `json:"cluster_id"`
				Endpoint string `json:"cluster_endpoint"`
				Local    bool   `json:"local"`
			} `json:"clusters"`
		}
		if err := json.Unmarshal(secret.Data[site.CSISecretKey], &clusters); err != nil {
			return err
		}
		if len(clusters.Clusters) != 1 || clusters.Clusters[0].ID != string(cluster.Spec.ClusterID) ||
			!clusters.Clusters[0].Local || clusters.Clusters[0].Endpoint != "https://site-a.example:8443" {
			return fmt.Errorf("clusters %+v", clusters)
		}
		return nil
	})

	run := &v1.OperatorOps{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "discovery-1"}}
	if err := admin.Create(ctx, run); err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the discovery run writes its draft", func() error {
		var draft v1.ClusterDeploymentConfig
		if err := admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "discovery-1"}, &draft); err != nil {
			return err
		}
		if len(draft.Spec.NodeSets) != 1 || draft.Spec.NodeSets[0].Nodes[0] != "node-1" {
			return fmt.Errorf("node sets %+v", draft.Spec.NodeSets)
		}
		return nil
	})

	eventually(t, ctx, "the metrics count the site's volumes", func() error {
		body, err := get(&http.Client{}, "http://"+metricsAddress+"/metrics")
		if err != nil {
			return err
		}
		if !strings.Contains(body, `baton_site_volumes{state="Active"} 0`) {
			return fmt.Errorf("no baton_site_volumes yet")
		}
		return nil
	})

	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test's own throw-away CA
	eventually(t, ctx, "the storage API refuses a caller without the cluster's token", func() error {
		body, err := get(insecure, "https://"+apiAddress+"/v1/capacity?placeCount=1")
		if err != nil {
			return err
		}
		if !strings.Contains(body, `"kind":"unauthorized"`) {
			return fmt.Errorf("body %q", body)
		}
		return nil
	})
	var clusterSecret string
	eventually(t, ctx, "the CSI secret carries the cluster's token", func() error {
		var secret corev1.Secret
		if err := admin.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "baton-csi"}, &secret); err != nil {
			return err
		}
		clusters, err := storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
		if err != nil || len(clusters.Entries) != 1 {
			return fmt.Errorf("clusters: %v", err)
		}
		clusterSecret = clusters.Entries[0].Secret
		return nil
	})
	api, err := storageapi.NewClient(storageapi.ClientConfig{ID: chain.ClusterID(cluster.Spec.ClusterID), Endpoint: "https://" + apiAddress,
		Secret: clusterSecret, TLS: &tls.Config{InsecureSkipVerify: true}}) //nolint:gosec // the test's own certificate
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, ctx, "the storage API answers the cluster's own client", func() error {
		root := chain.Ref{Cluster: chain.ClusterID(cluster.Spec.ClusterID), Volume: "00000000-0000-4000-8000-000000000001"}
		members, err := api.Members(ctx, root)
		if err != nil {
			return err
		}
		if len(members) != 0 {
			return fmt.Errorf("members of an unknown chain: %v", members)
		}
		return nil
	})
	if strings.Contains(logs.String(), "forbidden") {
		t.Errorf("the generated roles fell short:\n%s", logs.String())
	}
}

// setUpSite makes the namespace, the ServiceAccount bound to the generated
// roles, and the storage API's TLS secret.
func setUpSite(t *testing.T, ctx context.Context, admin client.Client) {
	t.Helper()
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "baton-controller"}},
	}
	objects = append(objects, generatedRoles(t)...)
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: namespace, Name: "baton-controller"}}
	roleRef := func(kind string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: kind, Name: "baton-controller"}
	}
	objects = append(objects,
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "baton-controller"}, Subjects: subject, RoleRef: roleRef("Role")},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "baton-controller"}, Subjects: subject, RoleRef: roleRef("ClusterRole")},
		tlsSecret(t))
	for _, o := range objects {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// generatedRoles reads deploy/rbac/role.yaml as make crds wrote it.
func generatedRoles(t *testing.T) []client.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repositoryRoot(), "deploy", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []client.Object
	for _, doc := range strings.Split(string(data), "\n---\n") {
		doc = strings.TrimPrefix(strings.TrimSpace(doc), "---")
		switch {
		case strings.Contains(doc, "kind: ClusterRole"):
			var role rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
			out = append(out, &role)
		case strings.Contains(doc, "kind: Role"):
			var role rbacv1.Role
			if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
			out = append(out, &role)
		}
	}
	if len(out) != 2 {
		t.Fatalf("deploy/rbac/role.yaml holds %d roles, want a ClusterRole and a Role", len(out))
	}
	return out
}

func tlsSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	ca, err := pki.NewCA("baton-controller test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue("baton-controller", pki.Names{IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "baton-controller-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: leaf.CertPEM, corev1.TLSPrivateKeyKey: leaf.KeyPEM}}
}

// writeKubeconfig writes a kubeconfig of the control plane's admin that
// impersonates user.
func writeKubeconfig(t *testing.T, config *rest.Config, dir, user string) string {
	t.Helper()
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["envtest"] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthorityData: config.CAData}
	kubeconfig.AuthInfos["operator"] = &clientcmdapi.AuthInfo{ClientCertificateData: config.CertData, ClientKeyData: config.KeyData,
		Token: config.BearerToken, Impersonate: user}
	kubeconfig.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "operator"}
	kubeconfig.CurrentContext = "envtest"
	path := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func get(c *http.Client, url string) (string, error) {
	response, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	return string(body), err
}

// eventually waits for check to pass: the operator works asynchronously.
// The bound is the test's context, not a timing claim.
func eventually(t *testing.T, ctx context.Context, what string, check func() error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		last = check()
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: never happened (last: %v)", what, last)
	}
}

func repositoryRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
