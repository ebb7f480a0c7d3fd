package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane"
	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// Where each site's processes listen, inside its own network namespace.
const (
	namespace        = "baton-system"
	storageAPIPort   = 8443
	streamPort       = 9500
	nodeMetricsPort  = 9480
	poolSizeBytes    = 2 << 30
	nodeName         = "node-1"
	readinessLimit   = 2 * time.Minute
	readinessPolling = 200 * time.Millisecond
)

// site is one site of the bed: its API server, its operator, its node agent
// and its CSI driver, and the bed's clients of them.
type site struct {
	name    string
	dir     string
	net     *siteNet
	cluster chain.ClusterID
	cp      *controlplane.ControlPlane
	client  client.Client
	store   *sitecontroller.Store
	// The site's processes, in the order they start.
	controller, node, csi *process
	deviceDir, poolDir    string
	conn                  *grpc.ClientConn
	csiNode               csispec.NodeClient
	csiController         csispec.ControllerClient
	addons                *grpc.ClientConn
	replication           replication.ControllerClient
	local                 storageapi.ClusterEntry
}

func (s *site) endpoint() string { return fmt.Sprintf("https://%s:%d", s.net.ip, storageAPIPort) }

func (s *site) socket(name string) string { return "unix://" + filepath.Join(s.dir, name) }

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// startControlPlane starts the site's API server on the bridge's address and
// makes what the operator finds there: its namespace, its TLS secret, the
// StorageCluster (btrfs, one replica per site) and its StorageNode. The
// deployment flow that makes them in production is the hub/deploy
// scenario's, not this bed's yet.
func (b *Bed) startControlPlane(ctx context.Context, s *site, index int) error {
	cp, err := controlplane.Start(controlplane.Options{CRDDirectories: []string{filepath.Join(repositoryRoot(), "deploy", "crds")},
		Address: b.net.hostIP(), Unsynced: true})
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	s.cp = cp
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	if s.client, err = client.New(cp.Config, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	s.cluster = chain.ClusterID(fmt.Sprintf("%08x-0000-4000-8000-%012x", index+0xa, index+1))
	if s.store, err = sitecontroller.NewStore(sitecontroller.StoreConfig{Client: s.client, Namespace: namespace,
		Cluster: s.cluster, ClusterName: s.name, Context: context.Background()}); err != nil {
		return err
	}
	certPEM, keyPEM, err := b.ca.issue("storage-api-"+s.name, s.net.ip)
	if err != nil {
		return err
	}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "baton-controller-tls"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}},
		&v1.StorageCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: s.name},
			Spec: v1.StorageClusterSpec{ClusterID: v1.UUID(s.cluster), StorageLayout: v1.StorageLayout{
				Pool: v1.PoolLayout{Name: "baton", Backend: v1.BackendBtrfs}, PlaceCount: 1,
				ReplicationInterval: metav1.Duration{Duration: b.options.ReplicationInterval}}}},
		&v1.StorageNode{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: v1.StorageNodeName(s.name, nodeName)},
			Spec: v1.StorageNodeSpec{Cluster: s.name, NodeName: nodeName, Address: s.net.ip}},
	}
	for _, o := range objects {
		if err := s.client.Create(ctx, o); err != nil {
			return fmt.Errorf("%s: create %T %s: %w", s.name, o, o.GetName(), err)
		}
	}
	return nil
}

// startController runs baton-controller in the site's namespace and waits
// for the CSI secret's local entry it writes.
func (b *Bed) startController(ctx context.Context, s *site) error {
	kubeconfig, err := writeKubeconfig(s)
	if err != nil {
		return err
	}
	s.controller, err = startProcess(s.name+"/baton-controller", s.net.namespacePath(), filepath.Join(s.dir, "baton-controller.log"),
		b.binary("baton-controller"), "--kubeconfig", kubeconfig, "--namespace", namespace, "--leader-elect=false",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--storage-api-address", fmt.Sprintf("%s:%d", s.net.ip, storageAPIPort), "--storage-api-endpoint", s.endpoint(),
		"--peer-ca-file", b.ca.file, "--tick-interval", "1s")
	if err != nil {
		return err
	}
	return b.waitFor(ctx, s.controller, s.name+": the operator writes its cluster's entry into the CSI secret", func() error {
		clusters, err := csiSecret(ctx, s)
		if err != nil {
			return err
		}
		entry, ok := clusters.Entry(s.cluster)
		if !ok || !entry.Local {
			return fmt.Errorf("no local entry for %s yet", s.cluster)
		}
		s.local = entry
		return nil
	})
}

func csiSecret(ctx context.Context, s *site) (storageapi.Clusters, error) {
	var secret corev1.Secret
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "baton-csi"}, &secret); err != nil {
		return storageapi.Clusters{}, err
	}
	return storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
}

// clustersDocument is the CSI secret's clusters key.
type clustersDocument struct {
	Clusters []storageapi.ClusterEntry `json:"clusters"`
}

// register adds the peer sites' clusters to the site's CSI secret, as a
// peer site registers itself (local=false), and writes the whole document
// to the file baton-node and baton-csi read.
func (b *Bed) register(ctx context.Context, s *site) (string, error) {
	var secret corev1.Secret
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "baton-csi"}, &secret); err != nil {
		return "", err
	}
	doc := clustersDocument{Clusters: []storageapi.ClusterEntry{s.local}}
	for _, peer := range b.sites {
		if peer != s {
			entry := peer.local
			entry.Local = false
			doc.Clusters = append(doc.Clusters, entry)
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	secret.Data[storageapi.SecretKey] = data
	if err := s.client.Update(ctx, &secret); err != nil {
		return "", fmt.Errorf("%s: register the peers in the CSI secret: %w", s.name, err)
	}
	file := filepath.Join(s.dir, "clusters.json")
	return file, os.WriteFile(file, data, 0o600)
}

// startStorage runs the site's node agent and CSI driver and waits until
// the node is Ready and the driver answers on its sockets.
func (b *Bed) startStorage(ctx context.Context, s *site, clustersFile string) error {
	s.poolDir, s.deviceDir = filepath.Join(s.dir, nodeName, "pool"), filepath.Join(s.dir, nodeName, "devices")
	certFile, keyFile, err := b.ca.issueFiles(s.dir, "stream-"+nodeName, s.net.ip)
	if err != nil {
		return err
	}
	stream := fmt.Sprintf("%s:%d", s.net.ip, streamPort)
	s.node, err = startProcess(s.name+"/baton-node", s.net.namespacePath(), filepath.Join(s.dir, "baton-node.log"),
		b.binary("baton-node"), "--node", nodeName, "--secret-file", clustersFile, "--cluster-id", string(s.cluster),
		"--ca-file", b.ca.file, "--backend", "btrfs", "--pool-dir", s.poolDir, "--pool-size-bytes", strconv.Itoa(poolSizeBytes),
		"--device-dir", s.deviceDir, "--stream-address", stream, "--advertise-address", stream,
		"--stream-cert", certFile, "--stream-key", keyFile, "--peer-ca-file", b.ca.file, "--interval", "1s",
		"--metrics-bind-address", fmt.Sprintf("%s:%d", s.net.ip, nodeMetricsPort))
	if err != nil {
		return err
	}
	s.csi, err = startProcess(s.name+"/baton-csi", s.net.namespacePath(), filepath.Join(s.dir, "baton-csi.log"),
		b.binary("baton-csi"), "--mode", "all", "--endpoint", s.socket("csi.sock"), "--csi-addons-address", s.socket("addons.sock"),
		"--node-id", nodeName, "--site", s.name, "--clusters-file", clustersFile, "--ca-file", b.ca.file,
		"--devices", "links", "--device-dir", s.deviceDir, "-v", "1")
	if err != nil {
		return err
	}
	if s.conn, err = grpc.NewClient(s.socket("csi.sock"), grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		return err
	}
	if s.addons, err = grpc.NewClient(s.socket("addons.sock"), grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		return err
	}
	s.csiNode, s.csiController = csispec.NewNodeClient(s.conn), csispec.NewControllerClient(s.conn)
	s.replication = replication.NewControllerClient(s.addons)
	identity := csispec.NewIdentityClient(s.conn)
	if err := b.waitFor(ctx, s.csi, s.name+": the CSI driver answers", func() error {
		_, err := identity.Probe(ctx, &csispec.ProbeRequest{})
		return err
	}); err != nil {
		return err
	}
	return b.waitFor(ctx, s.node, s.name+": "+nodeName+" is Ready", func() error {
		var cluster v1.StorageCluster
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: s.name}, &cluster); err != nil {
			return err
		}
		if cluster.Status.ReadyNodeCount < 1 {
			return fmt.Errorf("%d of %d nodes ready", cluster.Status.ReadyNodeCount, cluster.Status.NodeCount)
		}
		return nil
	})
}

// writeKubeconfig writes the API server's admin credentials for the
// operator. The bed's operator runs as the admin: the RBAC the generated
// roles grant is proven by cmd/baton-controller's tests, not here.
func writeKubeconfig(s *site) (string, error) {
	config := s.cp.Config
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters[s.name] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthorityData: config.CAData}
	kubeconfig.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: config.CertData, ClientKeyData: config.KeyData,
		Token: config.BearerToken}
	kubeconfig.Contexts[s.name] = &clientcmdapi.Context{Cluster: s.name, AuthInfo: "admin"}
	kubeconfig.CurrentContext = s.name
	path := filepath.Join(s.dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kubeconfig, path)
}

// waitFor polls check until it passes, the process it waits on exits, or
// readinessLimit passes.
func (b *Bed) waitFor(ctx context.Context, p *process, what string, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, readinessLimit)
	defer cancel()
	ticker := time.NewTicker(readinessPolling)
	defer ticker.Stop()
	for {
		err := check()
		if err == nil {
			fmt.Fprintf(b.options.Log, "local bed: %s (%s)\n", what, time.Since(b.started).Round(time.Millisecond))
			return nil
		}
		select {
		case <-ticker.C:
		case <-p.exited:
			return fmt.Errorf("%s: %s exited (%v); the end of its log:\n%s", what, p.name, p.err, p.tail())
		case <-ctx.Done():
			return fmt.Errorf("%s: still %v after %s; the end of %s's log:\n%s", what, err, readinessLimit, p.name, p.tail())
		}
	}
}

// stop stops the site's processes in reverse order and its API server.
func (s *site) stop() error {
	var errs []error
	for _, c := range []*grpc.ClientConn{s.conn, s.addons} {
		if c != nil {
			c.Close()
		}
	}
	for _, p := range []*process{s.csi, s.node, s.controller} {
		errs = append(errs, p.stop())
	}
	if s.cp != nil {
		errs = append(errs, s.cp.Stop())
	}
	return errors.Join(errs...)
}
