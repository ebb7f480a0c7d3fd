package csi

import (
	"context"
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
)

// parseHandle parses a volume handle: a missing one is InvalidArgument, one
// that does not parse NotFound -- no volume can have it, and the CSI spec's
// answer for a volume that does not exist is NotFound -- with what is wrong
// with it. An RPC parses the handle after checking its other fields, so a
// request that also misses one of them is InvalidArgument, as csi-sanity
// expects of a made-up volume ID.
func parseHandle(handle string) (chain.Ref, error) {
	if handle == "" {
		return chain.Ref{}, invalid("volume ID is required")
	}
	ref, err := chain.ParseRef(handle)
	if err != nil {
		return chain.Ref{}, toStatus(fmt.Errorf("%w: volume ID: %w", ErrNoVolume, err))
	}
	return ref, nil
}

// resolveRecorded resolves handle's chain and refuses one that no cluster
// records while every cluster answered (ErrNoVolume, rule 2's NotFound). When
// a cluster did not answer, the walk is what the others know -- perhaps only
// the root, Unknown -- and the caller decides: a site holding nothing but a
// replica must still fail the root over while its site is cut off.
func resolveRecorded(ctx context.Context, set *Set, handle chain.Ref) (chain.Resolution, error) {
	r, err := set.Resolve(ctx, handle)
	if err != nil {
		return chain.Resolution{}, err
	}
	if r.Recorded() || len(r.Unreachable) > 0 {
		return r, nil
	}
	if _, err := set.Cluster(handle.Cluster); err != nil {
		return chain.Resolution{}, fmt.Errorf("%w: volume %s: %w", ErrNoVolume, handle, err)
	}
	return chain.Resolution{}, fmt.Errorf("%w: no cluster records volume %s", ErrNoVolume, handle)
}

// localCluster is the cluster this site acts through toward end: the local
// cluster other than end's own (the promoting or fail-back site). With no
// cluster marked local, the one cluster other than end's.
func localCluster(set *Set, end chain.Ref) (chain.ClusterID, error) {
	candidates := set.Local()
	if len(candidates) == 0 {
		candidates = set.IDs()
	}
	var others []chain.ClusterID
	for _, c := range candidates {
		if c != end.Cluster {
			others = append(others, c)
		}
	}
	if len(others) != 1 {
		return "", fmt.Errorf("%w: cannot tell which cluster acts for this site toward %s: candidates %v",
			chain.ErrNoLocalMember, end, others)
	}
	return others[0], nil
}
