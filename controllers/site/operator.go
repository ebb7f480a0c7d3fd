package site

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// ErrNoCluster: the namespace holds no StorageCluster this operator runs (the
// deployment flow has not expanded a draft yet). Ticks wait for one.
var ErrNoCluster = errors.New("no StorageCluster to run")

// OperatorConfig configures an Operator.
type OperatorConfig struct {
	// Client writes; Reader reads uncached (the manager's APIReader).
	Client client.Client
	Reader client.Reader
	// Namespace holds the site's objects.
	Namespace string
	// Cluster is the spec.clusterID of the StorageCluster to run; empty runs
	// the only StorageCluster of Namespace.
	Cluster chain.ClusterID
	// Context bounds the store's calls for the operator's life.
	Context context.Context
	// Clock is the only time the core and the reconcilers read.
	Clock backend.Clock
	// Peers reaches the other sites; nil treats every peer as unreachable
	// (the storage API client that reaches them is another package's).
	Peers core.Peers
	// NewVolumeID names new volumes; nil draws UUIDv4s from crypto/rand.
	NewVolumeID func() chain.VolumeID
	// ReplicaToken authorises the streams of a replica (core.Config); nil
	// leaves replicas without a token, which node agents refuse.
	ReplicaToken func(source chain.Ref) string
	// Metrics, when set, is updated after every tick and shipment.
	Metrics *Metrics
	Log     logr.Logger
}

// Operator owns the site's core (one core.Site over a CRD Store) and serves
// it through one storageapi.Local, the shell every caller goes through: the
// storage API's handlers, the ticker and the reconcilers (Do). Local locks
// per chain, never across a call to a peer site (issue 13); the operator's
// mutex guards only the building of the site from its StorageCluster.
type Operator struct {
	mu    sync.Mutex
	local *storageapi.Local

	config    OperatorConfig
	site      *core.Site
	siteStore *Store
	// loaded is the StorageCluster the site was built from: a changed spec
	// (a new interval, new ranges) rebuilds the site, which holds no state of
	// its own beyond its configuration.
	loaded struct {
		uid  string
		spec v1.StorageClusterSpec
	}
}

// NewOperator returns an operator; its site is built on first use from the
// StorageCluster.
func NewOperator(config OperatorConfig) (*Operator, error) {
	switch {
	case config.Client == nil || config.Context == nil || config.Clock == nil:
		return nil, fmt.Errorf("an operator needs a client, a context and a clock")
	case config.Namespace == "":
		return nil, fmt.Errorf("an operator needs a namespace")
	case config.Cluster != "" && !chain.IsUUID(string(config.Cluster)):
		return nil, fmt.Errorf("cluster %q is not a UUID", config.Cluster)
	}
	if config.Reader == nil {
		config.Reader = config.Client
	}
	if config.Peers == nil {
		config.Peers = unreachablePeers{}
	}
	if config.NewVolumeID == nil {
		config.NewVolumeID = func() chain.VolumeID { return chain.VolumeID(NewUUID(rand.Reader)) }
	}
	o := &Operator{config: config}
	o.local = storageapi.NewLocalWith(o.acquire, o.clusterID, storageapi.WithCourier(storageapi.NewGoCourier(0)),
		storageapi.WithFailures(func(err error) { config.Log.Error(err, "a peer's answer was not taken in") }))
	return o, nil
}

// Tick moves the core's time-driven work once, then updates the metrics.
func (o *Operator) Tick(ctx context.Context) error {
	s, err := o.built(ctx)
	if err != nil {
		return err
	}
	if err := o.local.Tick(); err != nil {
		return fmt.Errorf("failed to tick site %s: %w", s.Cluster(), err)
	}
	if o.config.Metrics == nil {
		return nil
	}
	return o.config.Metrics.observe(o.store(), o.config.Clock.Now())
}

// built is the site built from the StorageCluster.
func (o *Operator) built(ctx context.Context) (*core.Site, error) {
	s, release, err := o.acquire(ctx)
	if err != nil {
		return nil, err
	}
	release()
	return s, nil
}

// store is the store of the site built last.
func (o *Operator) store() core.Store {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.siteStore
}

// ensureSite builds (or rebuilds) the site from its StorageCluster.
func (o *Operator) ensureSite(ctx context.Context) (*core.Site, error) {
	cluster, err := o.storageCluster(ctx)
	if err != nil {
		return nil, err
	}
	if o.site != nil && o.loaded.uid == string(cluster.UID) && equality.Semantic.DeepEqual(o.loaded.spec, cluster.Spec) {
		return o.site, nil
	}
	id := chain.ClusterID(cluster.Spec.ClusterID)
	store, err := NewStore(StoreConfig{Client: o.config.Client, Reader: o.config.Reader, Namespace: o.config.Namespace,
		Cluster: id, ClusterName: cluster.Name, Context: o.config.Context, OnSync: o.onSync})
	if err != nil {
		return nil, err
	}
	s, err := NewCore(id, cluster.Spec.StorageLayout, CoreParts{Store: store, Peers: o.config.Peers, Clock: o.config.Clock,
		NewVolumeID: o.config.NewVolumeID, ReplicaToken: o.config.ReplicaToken})
	if err != nil {
		return nil, fmt.Errorf("failed to build site %s: %w", cluster.Spec.ClusterID, err)
	}
	o.site, o.siteStore = s, store
	o.loaded.uid, o.loaded.spec = string(cluster.UID), *cluster.Spec.DeepCopy()
	o.config.Log.Info("site loaded", "cluster", cluster.Spec.ClusterID, "storageCluster", cluster.Name,
		"generation", cluster.Generation)
	return s, nil
}

func (o *Operator) onSync(p core.Pairing) {
	if o.config.Metrics != nil {
		o.config.Metrics.shipped(p)
	}
}

// storageCluster finds the StorageCluster the operator runs.
func (o *Operator) storageCluster(ctx context.Context) (*v1.StorageCluster, error) {
	var list v1.StorageClusterList
	if err := o.config.Reader.List(ctx, &list, client.InNamespace(o.config.Namespace)); err != nil {
		return nil, fmt.Errorf("failed to list storage clusters: %w", err)
	}
	var found []*v1.StorageCluster
	for i := range list.Items {
		if o.config.Cluster == "" || chain.ClusterID(list.Items[i].Spec.ClusterID) == o.config.Cluster {
			found = append(found, &list.Items[i])
		}
	}
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("%w in %s (cluster %q)", ErrNoCluster, o.config.Namespace, o.config.Cluster)
	case len(found) > 1:
		return nil, fmt.Errorf("%d storage clusters in %s; name the one to run with --cluster-id", len(found), o.config.Namespace)
	}
	return found[0], nil
}

// unreachablePeers stands in for the storage API client until one is given:
// every other site is unreachable, which the core treats as "ask again later".
type unreachablePeers struct{}

func (unreachablePeers) Handover(source chain.Ref) (core.Handover, error) {
	return core.Handover{}, fmt.Errorf("%s: %w", source.Cluster, chain.ErrUnreachable)
}
func (unreachablePeers) LearnSuccessor(member, _ chain.Ref) error {
	return fmt.Errorf("%s: %w", member.Cluster, chain.ErrUnreachable)
}
func (unreachablePeers) PrepareReceive(target chain.ClusterID, _ core.ReceiveRequest) ([]core.Receiver, error) {
	return nil, fmt.Errorf("%s: %w", target, chain.ErrUnreachable)
}
func (unreachablePeers) Holdings(cluster chain.ClusterID, _ chain.Ref) ([]string, error) {
	return nil, fmt.Errorf("%s: %w", cluster, chain.ErrUnreachable)
}
