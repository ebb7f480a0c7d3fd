package core

import (
	"fmt"
	"slices"
)

// FenceNode records that a node is known to be down -- or, with fenced
// false, that it is back. Kubernetes says so with the out-of-service taint
// an administrator or a fencing operator puts on a node that is shut down.
// While a node is fenced, a replica on another node of its volumes may be
// promoted without it: DRBD runs with `fencing resource-only` and no
// fence-peer handler, so only the control plane can vouch that the missing
// peer writes nothing. Fencing a node that is in fact running risks a split
// brain; that is the taint's contract, not this function's.
func (s *Site) FenceNode(name string, fenced bool) error {
	_, err := perform(s, func(d Decisions, _ *Told) (struct{}, Effects, error) { return d.FenceNode(name, fenced) })
	return err
}

// FenceNode decides Site.FenceNode.
func (d Decisions) FenceNode(name string, fenced bool) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.fenceNode(name, fenced) })
}

func (s *Site) fenceNode(name string, fenced bool) error {
	nodes, err := s.store.Nodes()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(nodes, func(n Node) bool { return n.Name == name })
	if i < 0 {
		return fmt.Errorf("%w: no storage node %q", ErrNotFound, name)
	}
	if nodes[i].Fenced == fenced {
		return nil
	}
	n := nodes[i]
	n.Fenced = fenced
	return s.store.PutNode(n)
}
