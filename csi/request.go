package csi

import (
	"context"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// request is the preamble every RPC shares, done once: the lock of what the
// RPC acts on is held (one operation per volume, name or snapshot at a
// time), and the clusters the request's secrets name are open. The RPC
// defers release.
type request struct {
	set     *Set
	release func()
}

// begin takes key's lock -- none when key is empty: reads take no lock --
// and opens the request's clusters. A busy lock answers ErrBusy (Aborted:
// the CO retries); on any error nothing is held.
func begin(locks *Locks, clusters *Clusters, key string, secrets map[string]string) (request, error) {
	release := func() {}
	if key != "" {
		var err error
		if release, err = locks.Lock(key); err != nil {
			return request{}, err
		}
	}
	set, err := clusters.Open(secrets)
	if err != nil {
		release()
		return request{}, err
	}
	return request{set: set, release: release}, nil
}

// resolve resolves the handle's chain (resolveRecorded).
func (r request) resolve(ctx context.Context, handle chain.Ref) (chain.Resolution, error) {
	return resolveRecorded(ctx, r.set, handle)
}

// activeEnd resolves handle to its chain's Active end and finds the cluster
// that holds it: the member a clone, an expansion or a snapshot acts on.
func (r request) activeEnd(ctx context.Context, handle, what string) (chain.Ref, storageapi.API, error) {
	end, err := activeEnd(ctx, r.set, handle, what)
	if err != nil {
		return chain.Ref{}, storageapi.API{}, err
	}
	api, err := r.set.Cluster(end.Cluster)
	if err != nil {
		return chain.Ref{}, storageapi.API{}, err
	}
	return end, api, nil
}
