package sim

import (
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/site"
)

// peers is a site's view of the other sites' control planes, across the
// simulated network: a call reaches its target only while both directions of
// the path are open and the target's operator runs.
type peers struct{ from *Site }

func (p peers) to(cluster chain.ClusterID) (*Site, error) {
	w := p.from.world
	target := w.Site(string(cluster))
	if _, err := w.Net.Call(p.from.Controller(), target.Controller()); err != nil {
		return nil, fmt.Errorf("%s -> %s: %w: %w", p.from.Name, target.Name, chain.ErrUnreachable, err)
	}
	if !target.ControllerUp {
		return nil, fmt.Errorf("%s -> %s: operator down: %w", p.from.Name, target.Name, chain.ErrUnreachable)
	}
	return target, nil
}

func (p peers) Handover(source chain.Ref) (site.Handover, error) {
	t, err := p.to(source.Cluster)
	if err != nil {
		return site.Handover{}, err
	}
	return t.Control.Handover(source)
}

func (p peers) LearnSuccessor(member, successor chain.Ref) error {
	t, err := p.to(member.Cluster)
	if err != nil {
		return err
	}
	return t.Control.LearnSuccessor(member, successor)
}

func (p peers) PrepareReceive(target chain.ClusterID, request site.ReceiveRequest) ([]site.Receiver, error) {
	t, err := p.to(target)
	if err != nil {
		return nil, err
	}
	return t.Control.PrepareReceive(request)
}

func (p peers) Holdings(cluster chain.ClusterID, root chain.Ref) ([]string, error) {
	t, err := p.to(cluster)
	if err != nil {
		return nil, err
	}
	return t.Control.Holdings(root)
}
