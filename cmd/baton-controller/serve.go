package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/baton-dr/baton/internal/command"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	site "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
)

// wallClock is production's clock; everything below the shell reads it
// through backend.Clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// serve builds the manager, the operator and its reconcilers, and runs them
// until ctx ends.
func serve(ctx context.Context, o options, stderr io.Writer) error {
	logger := logr.FromSlogHandler(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.Level(-o.logLevel)}))
	ctrl.SetLogger(logger)
	config, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	m, err := newManager(config, o, logger)
	if err != nil {
		return err
	}
	op, err := wire(ctx, m, o, logger)
	if err != nil {
		return err
	}
	if o.storageAPIAddress != "0" {
		// The storage API is served over the operator's site; see storageAPIHandler.
		err := m.Add(&storageAPIServer{address: o.storageAPIAddress, cluster: op.Local(), reader: m.GetAPIReader(),
			namespace: o.namespace, tlsSecret: o.tlsSecret, csiSecret: o.csiSecret, log: logger.WithName("storage-api")})
		if err != nil {
			return err
		}
	}
	logger.Info("starting", "namespace", o.namespace, "cluster", o.clusterID, "leaderElect", o.leaderElect,
		"storageAPI", o.storageAPIAddress, "endpoint", o.endpoint())
	return m.Start(ctx)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to read --kubeconfig %s: %w", kubeconfig, err)
	}
	return config, nil
}

// newManager caches the operator's namespace only; PVs and PVCs (the drills'
// bubbles) are read uncached, so the operator needs no cluster-wide watch.
func newManager(config *rest.Config, o options, logger logr.Logger) (manager.Manager, error) {
	scheme, err := command.NewScheme(v1.AddToScheme)
	if err != nil {
		return nil, err
	}
	m, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                  scheme,
		Logger:                  logger,
		Metrics:                 o.serving.MetricsOptions(),
		HealthProbeBindAddress:  o.serving.ProbeAddress(),
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        o.leaderElectionID,
		LeaderElectionNamespace: o.namespace,
		Cache:                   cache.Options{DefaultNamespaces: map[string]cache.Config{o.namespace: {}}},
		Client: client.Options{Cache: &client.CacheOptions{
			DisableFor: []client.Object{&corev1.PersistentVolume{}, &corev1.PersistentVolumeClaim{}}}},
	})
	if err != nil {
		return nil, fmt.Errorf("failed to build the manager: %w", err)
	}
	return m, command.AddProbes(m)
}

// wire builds the operator and registers the ticker and every reconciler.
func wire(ctx context.Context, m manager.Manager, o options, logger logr.Logger) (*site.Operator, error) {
	metrics, err := site.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return nil, err
	}
	clock := wallClock{}
	peerTLS, err := peerTLSConfig(o.peerCAFile)
	if err != nil {
		return nil, err
	}
	peers := &site.SecretPeers{Reader: m.GetClient(), Namespace: o.namespace, SecretName: o.csiSecret, TLS: peerTLS}
	// Tokens are derived under the operator's mutex: they read the cached CSI
	// secret, never the operator.
	tokens := site.SecretTokens{Reader: m.GetClient(), Namespace: o.namespace, SecretName: o.csiSecret,
		Cluster: chain.ClusterID(o.clusterID)}
	op, err := site.NewOperator(site.OperatorConfig{Client: m.GetClient(), Reader: m.GetAPIReader(), Namespace: o.namespace,
		Cluster: chain.ClusterID(o.clusterID), Context: ctx, Clock: clock, Metrics: metrics, Peers: peers,
		ReplicaToken: tokens.Token, Log: logger.WithName("site")})
	if err != nil {
		return nil, err
	}
	discoverer, err := newDiscoverer(o.discoveryFile)
	if err != nil {
		return nil, err
	}
	c := m.GetClient()
	type setup interface{ SetupWithManager(ctrl.Manager) error }
	for _, r := range []setup{
		&site.VolumeStatusReconciler{Client: c, Clock: clock},
		&site.ReplicationStatusReconciler{Client: c, Clock: clock},
		&site.ReplicaStatusReconciler{Client: c, Clock: clock},
		&site.StorageNodeStatusReconciler{Client: c, Clock: clock},
		&site.StorageClusterStatusReconciler{Client: c, Clock: clock},
		&site.OperatorOpsReconciler{Client: c, Clock: clock, Discoverer: discoverer},
		&site.DraftReconciler{Client: c, Clock: clock, Random: rand.Reader},
		&site.TestFailoverReconciler{Client: c, Clock: clock, Local: op.Local(), DriverName: o.csiDriver},
		&site.NodeFencingReconciler{Client: c, Local: op.Local()},
		&site.CSISecretReconciler{Client: c, Namespace: o.namespace, SecretName: o.csiSecret, PeersSecretName: o.peersSecret,
			Endpoint: o.endpoint(), Random: rand.Reader},
	} {
		if err := r.SetupWithManager(m); err != nil {
			return nil, fmt.Errorf("failed to set up %T: %w", r, err)
		}
	}
	return op, m.Add(&site.Ticker{Operator: op, Interval: o.tickInterval, Log: logger.WithName("ticker")})
}

// endpoint is the storage API's advertised URL.
func (o options) endpoint() string {
	if o.storageAPIEndpoint != "" {
		return o.storageAPIEndpoint
	}
	port := ""
	if _, p, err := net.SplitHostPort(o.storageAPIAddress); err == nil && p != "443" {
		port = ":" + p
	}
	return "https://baton-controller." + o.namespace + ".svc" + port
}

// fileDiscoverer reads the discovery file at every run, so a bed can change
// it between runs.
type fileDiscoverer string

func (f fileDiscoverer) Candidates(context.Context) ([]site.NodeCandidates, error) {
	data, err := os.ReadFile(string(f))
	if err != nil {
		return nil, fmt.Errorf("failed to read the discovery file: %w", err)
	}
	return site.ParseCandidates(data)
}

// noDiscoverer answers runs until node-agent discovery lands.
type noDiscoverer struct{}

func (noDiscoverer) Candidates(context.Context) ([]site.NodeCandidates, error) {
	return nil, fmt.Errorf("node-agent discovery has not landed; start the operator with --discovery-file")
}

func newDiscoverer(file string) (site.Discoverer, error) {
	if strings.TrimSpace(file) == "" {
		return noDiscoverer{}, nil
	}
	if _, err := os.Stat(file); err != nil {
		return nil, fmt.Errorf("--discovery-file: %w", err)
	}
	return fileDiscoverer(file), nil
}

// peerTLSConfig trusts the CAs of --peer-ca-file for peer sites' storage APIs,
// or the system roots without it.
func peerTLSConfig(caFile string) (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return config, nil
	}
	pool, err := command.ReadRoots(caFile, "--peer-ca-file")
	if err != nil {
		return nil, err
	}
	config.RootCAs = pool
	return config, nil
}
