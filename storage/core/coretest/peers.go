package coretest

import (
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Peers routes one site's calls to the other sites' cores directly (no
// network), unless Reachable says the two are cut apart.
type Peers struct {
	Self chain.ClusterID
	// Sites finds a peer's core.
	Sites func(chain.ClusterID) *core.Site
	// Reachable says whether Self and another site reach each other; nil:
	// always.
	Reachable func(from, to chain.ClusterID) bool
}

var _ core.Peers = Peers{}

func (p Peers) to(c chain.ClusterID) (*core.Site, error) {
	if p.Reachable != nil && !p.Reachable(p.Self, c) {
		return nil, fmt.Errorf("%s -> %s: %w", p.Self[:8], c[:8], chain.ErrUnreachable)
	}
	return p.Sites(c), nil
}

func (p Peers) Handover(source chain.Ref) (core.Handover, error) {
	s, err := p.to(source.Cluster)
	if err != nil {
		return core.Handover{}, err
	}
	return s.Handover(source)
}

func (p Peers) LearnSuccessor(member, successor chain.Ref) error {
	s, err := p.to(member.Cluster)
	if err != nil {
		return err
	}
	return s.LearnSuccessor(member, successor)
}

func (p Peers) PrepareReceive(target chain.ClusterID, r core.ReceiveRequest) ([]core.Receiver, error) {
	s, err := p.to(target)
	if err != nil {
		return nil, err
	}
	return s.PrepareReceive(r)
}

func (p Peers) Holdings(c chain.ClusterID, root chain.Ref) ([]string, error) {
	s, err := p.to(c)
	if err != nil {
		return nil, err
	}
	return s.Holdings(root)
}
