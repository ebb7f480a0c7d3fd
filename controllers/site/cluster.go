package site

import (
	"context"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// Local is the operator's site's control plane: the same storageapi.Local
// the simulation runs. The storage API server is mounted over it
// (cmd/baton-controller, storageAPIHandler), and the operator's own
// reconcilers (drills, node fences) go through it.
func (o *Operator) Local() *storageapi.Local { return o.local }

// acquire hands out the core, built from its StorageCluster if need be,
// holding the operator's mutex until release (Local releases it at once).
func (o *Operator) acquire(ctx context.Context) (*core.Site, func(), error) {
	o.mu.Lock()
	s, err := o.ensureSite(ctx)
	if err != nil {
		o.mu.Unlock()
		return nil, nil, err
	}
	return s, o.mu.Unlock, nil
}

// clusterID is the cluster the site runs: the loaded site's, else the
// configured one (empty until a StorageCluster exists when none was configured).
func (o *Operator) clusterID() chain.ClusterID {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.site != nil {
		return o.site.Cluster()
	}
	return o.config.Cluster
}
