package storageapi

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Peers is core.Peers over the storage APIs of the other sites: how a site's
// control plane reaches its peers in production (and in tests through real
// HTTPS). A cluster it does not know is unreachable: configuration may name it
// later, and the site asks again on its next Tick.
type Peers struct {
	Clusters map[chain.ClusterID]Cluster
	// CallTimeout bounds each call; zero is DefaultCallTimeout.
	CallTimeout time.Duration
}

var _ core.Peers = Peers{}

func (p Peers) to(id chain.ClusterID) (API, context.Context, context.CancelFunc, error) {
	c, ok := p.Clusters[id]
	if !ok {
		return API{}, nil, nil, fmt.Errorf("cluster %s is not configured: %w", id, chain.ErrUnreachable)
	}
	timeout := p.CallTimeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	return API{c}, ctx, cancel, nil
}

func (p Peers) Handover(source chain.Ref) (core.Handover, error) {
	c, ctx, cancel, err := p.to(source.Cluster)
	if err != nil {
		return core.Handover{}, err
	}
	defer cancel()
	return c.Handover(ctx, source)
}

func (p Peers) LearnSuccessor(member, successor chain.Ref) error {
	c, ctx, cancel, err := p.to(member.Cluster)
	if err != nil {
		return err
	}
	defer cancel()
	return c.LearnSuccessor(ctx, member, successor)
}

func (p Peers) PrepareReceive(target chain.ClusterID, request core.ReceiveRequest) ([]core.Receiver, error) {
	c, ctx, cancel, err := p.to(target)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return c.PrepareReceive(ctx, request)
}

func (p Peers) Holdings(cluster chain.ClusterID, root chain.Ref) ([]string, error) {
	c, ctx, cancel, err := p.to(cluster)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return c.Holdings(ctx, root)
}
