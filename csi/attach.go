package csi

import (
	"context"
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// ResolveAttach resolves a volume handle to the chain's end and makes node its
// primary: the part of NodeStageVolume that decides what is staged, with no
// operating system in it, so that the simulation calls it as it is.
//
// Rule 6: resolution needs only the site that holds the end; clusters that do
// not answer are skipped. What it never does is fall back: an end whose
// cluster did not answer is Unavailable, an end on another site or a fenced
// one is FailedPrecondition -- attaching an earlier member instead would
// serve stale data on a partitioned site.
func ResolveAttach(ctx context.Context, set *Set, handle chain.Ref, node string) (core.Volume, error) {
	end, api, err := localEnd(ctx, set, handle)
	if err != nil {
		return core.Volume{}, err
	}
	return api.Attach(ctx, end, node)
}

// localEnd is the chain's end when it is Active on a local cluster, and
// that cluster's storage API.
func localEnd(ctx context.Context, set *Set, handle chain.Ref) (chain.Ref, storageapi.API, error) {
	r, err := resolveRecorded(ctx, set, handle)
	if err != nil {
		return chain.Ref{}, storageapi.API{}, err
	}
	end := r.End()
	switch {
	case end.State == chain.Unknown:
		return chain.Ref{}, storageapi.API{}, fmt.Errorf("%w: the end of %s's chain, %s, is on a cluster that did not answer; no earlier member is attached instead",
			chain.ErrUnreachable, handle, end.Ref)
	case !set.IsLocal(end.Ref.Cluster):
		return chain.Ref{}, storageapi.API{}, fmt.Errorf("%w: the end of %s's chain is %s on cluster %s", ErrNotHere, handle, end.Ref, end.Ref.Cluster)
	case end.State != chain.Active:
		return chain.Ref{}, storageapi.API{}, fmt.Errorf("%w: the end of %s's chain, %s, is %s", core.ErrNotActive, handle, end.Ref, end.State)
	}
	api, err := set.Cluster(end.Ref.Cluster)
	if err != nil {
		return chain.Ref{}, storageapi.API{}, err
	}
	return end.Ref, api, nil
}
