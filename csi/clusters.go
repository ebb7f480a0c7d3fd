package csi

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// ErrUnknownCluster: a handle, a snapshot or a parameter names a cluster the
// clusters secret does not list.
var ErrUnknownCluster = errors.New("cluster is not in the clusters secret")

// Dialer turns one entry of the clusters secret into that cluster's storage API.
type Dialer interface {
	Dial(entry storageapi.ClusterEntry) (storageapi.Cluster, error)
}

// HTTPDialer dials storageapi.Client over HTTPS, keeping one client per entry
// so that connections are reused across RPCs.
type HTTPDialer struct {
	TLS         *tls.Config // nil: the system roots
	CallTimeout time.Duration
	// DialConn opens connections; nil dials directly (see storageapi.ClientConfig).
	DialConn func(ctx context.Context, network, address string) (net.Conn, error)

	mu      sync.Mutex
	clients map[[sha256.Size]byte]*storageapi.Client
}

func (d *HTTPDialer) Dial(entry storageapi.ClusterEntry) (storageapi.Cluster, error) {
	key := sha256.Sum256([]byte(string(entry.ID) + "\x00" + entry.Endpoint + "\x00" + entry.Secret))
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.clients[key]; ok {
		return c, nil
	}
	c, err := storageapi.NewClient(storageapi.ClientConfig{ID: entry.ID, Endpoint: entry.Endpoint, Secret: entry.Secret,
		TLS: d.TLS, CallTimeout: d.CallTimeout, Dial: d.DialConn})
	if err != nil {
		return nil, err
	}
	if d.clients == nil {
		d.clients = map[[sha256.Size]byte]*storageapi.Client{}
	}
	d.clients[key] = c
	return c, nil
}

// Clusters turns a request's secrets into the clusters it talks to.
type Clusters struct {
	Dialer Dialer
	// Default is used when a request carries no clusters secret: the same
	// Secret, mounted into the driver's pod (--clusters-file). Node RPCs
	// other than NodeStageVolume carry no secrets at all.
	Default *storageapi.Clusters
}

// Open parses the request's clusters secret (or takes the default) and dials
// every cluster it lists.
func (c *Clusters) Open(secrets map[string]string) (*Set, error) {
	config, err := storageapi.ClustersFromSecrets(secrets)
	if errors.Is(err, storageapi.ErrNoClusters) && c.Default != nil {
		config, err = *c.Default, nil
	}
	if err != nil {
		return nil, err
	}
	set := &Set{config: config, apis: map[chain.ClusterID]storageapi.Cluster{}}
	for _, e := range config.Entries {
		api, err := c.Dialer.Dial(e)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", storageapi.ErrClusters, e, err)
		}
		set.apis[e.ID] = api
	}
	return set, nil
}

// Set is the clusters one request talks to.
type Set struct {
	config storageapi.Clusters
	apis   map[chain.ClusterID]storageapi.Cluster
}

// Cluster is the storage API of id.
func (s *Set) Cluster(id chain.ClusterID) (storageapi.API, error) {
	api, ok := s.apis[id]
	if !ok {
		return storageapi.API{}, fmt.Errorf("%w: %s (the secret lists %v)", ErrUnknownCluster, id, s.config.IDs())
	}
	return storageapi.API{Cluster: api}, nil
}

// Local lists the clusters this site manages (marked local), sorted; none
// when the secret marks none (an operator predating the flag).
func (s *Set) Local() []chain.ClusterID { return s.config.Local() }

// IsLocal reports whether id is a local cluster. With no cluster marked local
// every cluster counts as local: the old behaviour, one site's view.
func (s *Set) IsLocal(id chain.ClusterID) bool {
	local := s.Local()
	return len(local) == 0 || slices.Contains(local, id)
}

// IDs lists every cluster, sorted.
func (s *Set) IDs() []chain.ClusterID { return s.config.IDs() }

// Resolve walks root's chain over every cluster of the set (chain.Resolve:
// bounded, cycle-guarded, tolerant of unreachable clusters).
func (s *Set) Resolve(ctx context.Context, root chain.Ref) (chain.Resolution, error) {
	return chain.Resolve(directory{ctx: ctx, set: s}, s.IDs(), root)
}

// directory is chain.Directory over the set's storage APIs, for one request.
type directory struct {
	ctx context.Context
	set *Set
}

func (d directory) Members(cluster chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	api, err := d.set.Cluster(cluster)
	if err != nil {
		return nil, err
	}
	return api.Members(d.ctx, root)
}
