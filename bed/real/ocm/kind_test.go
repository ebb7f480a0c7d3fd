package ocm_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	kindlog "sigs.k8s.io/kind/pkg/log"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/real/infra"
	"github.com/baton-dr/baton/bed/real/ocm"
	"github.com/baton-dr/baton/controllers/hub"
	"github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/deploy/chart"
	"github.com/baton-dr/baton/internal/steplog"
)

// The end-to-end test on kind: two throwaway clusters of its own on the
// private dockerd (never the bed's), a hub and a site on kind's default
// network "kind", baton's chart on the site without a storage cluster, OCM
// and baton-hub on the hub; a StorageSiteDeployment submitted before the
// site has joined (Pending), then the site joined and accepted, and the
// request carried through Discovering, Drafted, the approval, Deploying and
// Online by the real OCM agents -- the site's StorageCluster is the hub's
// flow's, never applied directly.
//
//	BATON_OCM_KIND=1 BATON_OCM_IMAGE=$(ci/realbed/ocm-image.sh) BATON_IMAGE=$(make -s images) \
//	  go test -count=1 -timeout 45m -run TestOCMDeploysASitesStorageOnKind -v ./bed/real/ocm/
//
// BATON_OCM_KEEP=1 keeps the clusters for a look, and a later run with it
// set reuses them (without it, a run replaces them).

const (
	testHub       = "baton-ocmtest-hub"
	testSite      = "baton-ocmtest-site"
	managedName   = "site-b"
	siteNamespace = "baton-system"
	// hostDir is where the site's node mounts its host directory, as the
	// bed's sites do (the chart's storage.hostDir).
	hostDir     = "/var/lib/baton-realbed"
	poolBytes   = 2 << 30
	kindNetwork = "kind"
)

type testCluster struct {
	name, pods, services string
	site                 bool
}

// The test's own ranges: clear of the bed's (10.240-242/16, 10.110-112/16,
// 10.250.0.0/24) and of docker0's 172.17.0.0/16.
var (
	hubCluster  = testCluster{name: testHub, pods: "10.245.0.0/16", services: "10.115.0.0/16"}
	siteCluster = testCluster{name: testSite, pods: "10.246.0.0/16", services: "10.116.0.0/16", site: true}
)

func TestOCMDeploysASitesStorageOnKind(t *testing.T) {
	if os.Getenv("BATON_OCM_KIND") == "" {
		t.Skip("creates two kind clusters on the private dockerd: set BATON_OCM_KIND=1, BATON_OCM_IMAGE and BATON_IMAGE (root)")
	}
	images := ocm.Images{OCM: os.Getenv("BATON_OCM_IMAGE"), Baton: os.Getenv("BATON_IMAGE")}
	if images.OCM == "" || images.Baton == "" {
		t.Fatal("BATON_OCM_IMAGE (ci/realbed/ocm-image.sh) and BATON_IMAGE (make images) name the images")
	}
	paths, err := infra.DefaultPaths()
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("DOCKER_HOST") == "" {
		t.Setenv("DOCKER_HOST", "unix://"+paths.DockerSocket())
	}
	t.Setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", kindNetwork)
	log.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	work := filepath.Join(paths.Cache, "ocmtest")
	p := ocm.NewProgress(testWriter{t})
	moduleDir, err := ocm.ModuleDir(ctx)
	if err != nil {
		t.Fatal(err)
	}

	hubC := createCluster(t, p, hubCluster, work)
	siteC := createCluster(t, p, siteCluster, work)
	for _, c := range []ocm.Cluster{hubC, siteC} {
		if err := p.Step(c.Name+": images", func() (string, error) {
			return infra.LoadImages(ctx, infra.Cluster{Name: c.Name}, images.OCM, images.Baton)
		}); err != nil {
			t.Fatal(err)
		}
	}
	siteAddress, err := nodeAddress(ctx, testSite+"-control-plane", kindNetwork)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Step(testSite+": baton's chart, no storage cluster", func() (string, error) {
		return installSite(ctx, t, siteC, images.Baton, siteAddress)
	}); err != nil {
		t.Fatal(err)
	}
	if err := ocm.Install(ctx, p, moduleDir, hubC, images); err != nil {
		t.Fatal(err)
	}

	request := ocm.Request("site-b-storage", managedName, siteNamespace, "site-b", []string{testSite + "-control-plane"}, infra.ReplicationInterval)
	d, err := ocm.Submit(ctx, p, hubC, request)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Until(ctx, v1.StorageSiteDeploymentPending, time.Minute); err != nil {
		t.Fatal(err)
	}
	hubAddress, err := nodeAddress(ctx, testHub+"-control-plane", kindNetwork)
	if err != nil {
		t.Fatal(err)
	}
	joined := ocm.Site{Cluster: siteC, ManagedCluster: managedName, Namespace: siteNamespace}
	if err := ocm.Join(ctx, p, moduleDir, hubC, ocm.HubServer(hubAddress), joined, images); err != nil {
		t.Fatal(err)
	}
	if err := d.Until(ctx, v1.StorageSiteDeploymentDrafted, 6*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := d.Approve(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.Until(ctx, v1.StorageSiteDeploymentOnline, 8*time.Minute); err != nil {
		t.Fatal(err)
	}
	p.Printf("phases: %s", ocm.Transitions(d.Seen()))
	var phases []v1.StorageSiteDeploymentPhase
	for _, s := range d.Seen() {
		phases = append(phases, s.Phase)
	}
	want := []v1.StorageSiteDeploymentPhase{v1.StorageSiteDeploymentPending, v1.StorageSiteDeploymentDiscovering,
		v1.StorageSiteDeploymentDrafted, v1.StorageSiteDeploymentDeploying, v1.StorageSiteDeploymentOnline}
	if !slices.Equal(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	checkTheSiteIsTheFlows(ctx, t, hubC, siteC, d.Last())
}

// checkTheSiteIsTheFlows reads the site and the hub: the storage cluster
// the request reports is the one on the site, expanded from the draft the
// discovery wrote; the discovery run was created by OCM's work agent and
// the draft sized by the hub's field manager through it; the hub's work
// is Applied and the site holds its AppliedManifestWork.
func checkTheSiteIsTheFlows(ctx context.Context, t *testing.T, hubC, siteC ocm.Cluster, request *v1.StorageSiteDeployment) {
	t.Helper()
	s, h := controllerClient(t, siteC), controllerClient(t, hubC)
	reported := request.Status.Cluster
	if reported == nil || reported.ClusterID == "" || request.Status.ReadyNodeCount < 1 {
		t.Fatalf("the request at Online reports %+v, %d ready nodes", reported, request.Status.ReadyNodeCount)
	}
	var storage v1.StorageCluster
	if err := s.Get(ctx, client.ObjectKey{Namespace: siteNamespace, Name: reported.Name}, &storage); err != nil {
		t.Fatalf("the site's StorageCluster %s: %v", reported.Name, err)
	}
	if storage.Spec.ClusterID != reported.ClusterID || storage.Labels[site.DraftLabel] != request.Status.Run ||
		storage.Status.ReadyNodeCount < 1 || storage.Spec.Pool.Backend != v1.BackendBtrfs {
		t.Errorf("the site's StorageCluster: id %s (reported %s), draft %q (run %s), %d ready, backend %s", storage.Spec.ClusterID,
			reported.ClusterID, storage.Labels[site.DraftLabel], request.Status.Run, storage.Status.ReadyNodeCount, storage.Spec.Pool.Backend)
	}
	var run v1.OperatorOps
	if err := s.Get(ctx, client.ObjectKey{Namespace: siteNamespace, Name: request.Status.Run}, &run); err != nil {
		t.Fatalf("the discovery run: %v", err)
	}
	if managers := managersOf(run.ManagedFields); !slices.Contains(managers, workv1.DefaultFieldManager) {
		t.Errorf("the discovery run's managers %v: OCM's work agent (%s) did not create it", managers, workv1.DefaultFieldManager)
	}
	var draft v1.ClusterDeploymentConfig
	if err := s.Get(ctx, client.ObjectKey{Namespace: siteNamespace, Name: request.Status.Run}, &draft); err != nil {
		t.Fatalf("the draft: %v", err)
	}
	if managers := managersOf(draft.ManagedFields); !slices.Contains(managers, hub.FieldManager) || !draft.Spec.Approved {
		t.Errorf("the draft (approved %v) is managed by %v, want %s among them", draft.Spec.Approved, managers, hub.FieldManager)
	}
	var works workv1.ManifestWorkList
	if err := h.List(ctx, &works, client.InNamespace(managedName)); err != nil || len(works.Items) != 1 {
		t.Fatalf("the hub's works in %s: %d (%v)", managedName, len(works.Items), err)
	}
	work := works.Items[0]
	if !meta.IsStatusConditionTrue(work.Status.Conditions, workv1.WorkApplied) {
		t.Errorf("the work %s is not Applied: %+v", work.Name, work.Status.Conditions)
	}
	applied := &unstructured.UnstructuredList{}
	applied.SetGroupVersionKind(schema.GroupVersionKind{Group: "work.open-cluster-management.io", Version: "v1", Kind: "AppliedManifestWorkList"})
	if err := s.List(ctx, applied); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(applied.Items, func(a unstructured.Unstructured) bool { return strings.HasSuffix(a.GetName(), work.Name) }) {
		t.Errorf("the site has no AppliedManifestWork of %s", work.Name)
	}
	t.Logf("the site's storage cluster %s (%s), pool %s, nodes %v, from draft %s", storage.Name, storage.Spec.ClusterID,
		reported.Pool, reported.Nodes, request.Status.Run)
}

func managersOf(fields []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, f := range fields {
		out = append(out, f.Manager)
	}
	return out
}

// installSite installs baton's chart on the site as the hub's flow expects
// it: the operator, the node agent and the CSI driver, no StorageCluster,
// and the discovery list the operator's runs read. The node agent waits for
// its cluster (it has no CSI secret yet), so the install does not wait for
// the DaemonSet; the operator must be Available.
func installSite(ctx context.Context, t *testing.T, c ocm.Cluster, image, address string) (string, error) {
	values, err := chart.Defaults()
	if err != nil {
		return "", err
	}
	repository, tag, _ := strings.Cut(image, ":")
	values.Image.Repository, values.Image.Tag, values.Image.PullPolicy = repository, tag, "Never"
	values.Site = chart.Site{Name: testSite}
	values.Storage.HostDir = hostDir
	values.Storage.Btrfs.PoolSizeBytes = poolBytes
	values.StorageCluster.Create = false
	values.Operator.LeaderElect, values.CSIAddons.Manager.LeaderElect = false, false
	values.Operator.Discovery = []chart.DiscoveryNode{{Name: testSite + "-control-plane", Address: address,
		Devices: []v1.CandidateDevice{{Path: filepath.Join(hostDir, testSite, "pool", "pool.img"), Type: v1.DeviceTypeLoopFile, SizeBytes: poolBytes}}}}
	ca, caKey := issue(t, nil, nil, "baton-ocmtest-ca", nil)
	values.TLS.Create, values.TLS.CA = true, ca
	values.TLS.StorageAPICert, values.TLS.StorageAPIKey = issue(t, []byte(ca), []byte(caKey), "baton-controller."+testSite,
		[]string{"baton-controller.baton-system.svc", "baton-controller.baton-system.svc.cluster.local"})
	if err := values.Validate(); err != nil {
		return "", err
	}
	release, err := chart.Apply(ctx, chart.Target{Config: c.Config, Timeout: 5 * time.Minute}, values)
	if err != nil {
		return "", err
	}
	s := controllerClient(t, c)
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var operator appsv1.Deployment
		err := s.Get(ctx, client.ObjectKey{Namespace: siteNamespace, Name: "baton-controller"}, &operator)
		if err == nil && operator.Status.AvailableReplicas >= 1 {
			break
		}
		if time.Now().After(deadline) {
			return "", &waitError{what: "the operator is not Available", status: operator.Status.Conditions}
		}
		time.Sleep(2 * time.Second)
	}
	return "release " + release.Name + ", operator Available", nil
}

type waitError struct {
	what   string
	status []appsv1.DeploymentCondition
}

func (e *waitError) Error() string {
	data, _ := json.Marshal(e.status)
	return e.what + ": " + string(data)
}

// createCluster makes one throwaway cluster through kind's Go API (one
// replaced if a crashed run left it), as the bed makes its own: one node of
// the bed's node image, kind's CNI off and a static ptp conflist over the
// node's pod range, the site's node with the host's /dev and a host
// directory for its pool. Its teardown takes the node agent out first (it
// closes its pool), deletes the cluster, and releases whatever loop device
// is left of the site.
func createCluster(t *testing.T, p *steplog.Log, c testCluster, work string) ocm.Cluster {
	t.Helper()
	dir := filepath.Join(work, c.name)
	if err := os.MkdirAll(filepath.Join(dir, "baton"), 0o755); err != nil {
		t.Fatal(err)
	}
	provider := cluster.NewProvider(cluster.ProviderWithDocker())
	existing, err := provider.List()
	if err != nil {
		t.Fatal(err)
	}
	keep := os.Getenv("BATON_OCM_KEEP") != ""
	kubeconfig := filepath.Join(dir, "kubeconfig")
	there := slices.Contains(existing, c.name)
	if there {
		if err := provider.ExportKubeConfig(c.name, kubeconfig, false); err != nil {
			t.Fatal(err)
		}
	}
	switch {
	case there && keep:
		p.Printf("%s: kept from an earlier run (BATON_OCM_KEEP)", c.name)
	case there:
		deleteCluster(t, p, c, work, kubeconfig)
		fallthrough
	default:
		kind, err := kindConfigFor(c, dir)
		if err != nil {
			t.Fatal(err)
		}
		log, err := os.Create(filepath.Join(dir, "create.log"))
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		if err := p.Step(c.name+": created through kind's Go API", func() (string, error) {
			return "pods " + c.pods + ", services " + c.services, cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(logTo{log})).Create(c.name,
				cluster.CreateWithV1Alpha4Config(kind), cluster.CreateWithNodeImage(infra.NodeImage), cluster.CreateWithWaitForReady(5*time.Minute),
				cluster.CreateWithKubeconfigPath(kubeconfig), cluster.CreateWithDisplayUsage(false), cluster.CreateWithDisplaySalutation(false))
		}); err != nil {
			t.Fatal(err)
		}
	}
	rest, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if keep {
			t.Logf("kept %s (KUBECONFIG=%s)", c.name, kubeconfig)
			return
		}
		deleteCluster(t, p, c, work, kubeconfig)
	})
	return ocm.Cluster{Name: c.name, Config: rest}
}

// kindConfigFor is the cluster's kind configuration, its CNI conflist
// written into dir.
func kindConfigFor(c testCluster, dir string) (*v1alpha4.Cluster, error) {
	node := strings.TrimSuffix(strings.Split(c.pods, "/")[0], ".0.0") + ".0.0/24"
	conflist := filepath.Join(dir, "cni.conflist")
	config := `{"cniVersion":"0.4.0","name":"baton-ocmtest","plugins":[{"type":"ptp","ipMasq":true,"mtu":1500,"ipam":{"type":"host-local",` +
		`"dataDir":"/run/cni-ipam-state","routes":[{"dst":"0.0.0.0/0"}],"ranges":[[{"subnet":"` + node + `"}]]}},` +
		`{"type":"portmap","capabilities":{"portMappings":true}}]}`
	if err := os.WriteFile(conflist, []byte(config), 0o644); err != nil {
		return nil, err
	}
	kindNode := v1alpha4.Node{Role: v1alpha4.ControlPlaneRole, Image: infra.NodeImage, ExtraMounts: []v1alpha4.Mount{
		{HostPath: conflist, ContainerPath: "/etc/cni/net.d/10-baton-ocmtest.conflist", Readonly: true}}}
	if c.site {
		kindNode.ExtraMounts = append(kindNode.ExtraMounts, v1alpha4.Mount{HostPath: "/dev", ContainerPath: "/dev"},
			v1alpha4.Mount{HostPath: filepath.Join(dir, "baton"), ContainerPath: hostDir})
	}
	kind := &v1alpha4.Cluster{TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"}, Name: c.name,
		Nodes: []v1alpha4.Node{kindNode}, Networking: v1alpha4.Networking{IPFamily: v1alpha4.IPv4Family, PodSubnet: c.pods,
			ServiceSubnet: c.services, DisableDefaultCNI: true}}
	v1alpha4.SetDefaultsCluster(kind)
	return kind, nil
}

// deleteCluster takes the site's node agent out first (it closes its pool),
// deletes the cluster, and releases whatever loop device is left of the
// site.
func deleteCluster(t *testing.T, p *steplog.Log, c testCluster, work, kubeconfig string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if c.site {
		if rest, err := clientcmd.BuildConfigFromFlags("", kubeconfig); err == nil {
			takeTheNodeAgentOut(ctx, t, ocm.Cluster{Name: c.name, Config: rest})
		}
	}
	if err := cluster.NewProvider(cluster.ProviderWithDocker()).Delete(c.name, ""); err != nil {
		t.Errorf("delete %s: %v", c.name, err)
	}
	if c.site {
		scratch := filepath.Join(work, "scan")
		if err := os.MkdirAll(scratch, 0o700); err != nil {
			t.Error(err)
		}
		if err := infra.ReleaseDevices(ctx, scratch, []string{c.name}, t.Logf); err != nil {
			t.Errorf("the site's loop devices: %v", err)
		}
	}
	p.Printf("%s deleted", c.name)
}

// takeTheNodeAgentOut deletes the node agent's DaemonSet and waits for its
// pods to go: they close their pool on SIGTERM.
func takeTheNodeAgentOut(ctx context.Context, t *testing.T, c ocm.Cluster) {
	s := controllerClient(t, c)
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: siteNamespace, Name: "baton-node"}}
	if err := s.Delete(ctx, ds, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil && !apierrors.IsNotFound(err) {
		t.Logf("the node agent's DaemonSet: %v", err)
		return
	}
	for range 90 {
		var pods corev1.PodList
		if err := s.List(ctx, &pods, client.InNamespace(siteNamespace), client.MatchingLabels{"app": "baton-node"}); err == nil && len(pods.Items) == 0 {
			return
		}
		time.Sleep(time.Second)
	}
	t.Logf("the node agent's pods are still there after 90 s")
}

func controllerClient(t *testing.T, c ocm.Cluster) client.Client {
	t.Helper()
	s := ocm.Scheme()
	cl, err := client.New(c.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// issue makes an ECDSA certificate: self-signed (a CA) without a parent.
func issue(t *testing.T, parentPEM, parentKeyPEM []byte, name string, dns []string) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), DNSNames: dns,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	parent, signer := template, key
	if parentPEM == nil {
		template.IsCA, template.BasicConstraintsValid = true, true
	} else {
		block, _ := pem.Decode(parentPEM)
		if parent, err = x509.ParseCertificate(block.Bytes); err != nil {
			t.Fatal(err)
		}
		keyBlock, _ := pem.Decode(parentKeyPEM)
		if signer, err = x509.ParseECPrivateKey(keyBlock.Bytes); err != nil {
			t.Fatal(err)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

// testWriter hands the progress lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// logTo is kind's logger, into the cluster's create.log.
type logTo struct{ f *os.File }

func (l logTo) Warn(message string)                { fmt.Fprintln(l.f, message) }
func (l logTo) Warnf(format string, args ...any)   { fmt.Fprintf(l.f, format+"\n", args...) }
func (l logTo) Error(message string)               { l.Warn(message) }
func (l logTo) Errorf(format string, args ...any)  { l.Warnf(format, args...) }
func (l logTo) V(kindlog.Level) kindlog.InfoLogger { return l }
func (l logTo) Info(message string)                { l.Warn(message) }
func (l logTo) Infof(format string, args ...any)   { l.Warnf(format, args...) }
func (l logTo) Enabled() bool                      { return true }

// nodeAddress is a kind node's address on a docker network: where the
// other clusters on that network reach its API server (port 6443), which
// kubeadm's serving certificate names.
func nodeAddress(ctx context.Context, node, network string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", "inspect", "--format",
		"{{with index .NetworkSettings.Networks \""+network+"\"}}{{.IPAddress}}{{end}}", node).Output()
	address := strings.TrimSpace(string(out))
	if err != nil || address == "" {
		return "", fmt.Errorf("the node %s has no address on the docker network %s (%v)", node, network, err)
	}
	return address, nil
}
