package core

import (
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/placement"
)

// PrepareReceive makes this site keep a replica of another site's member and
// names the nodes that receive its streams. It is idempotent: the same source
// gets the same replica. A source already failed over here is ErrSuperseded:
// its later writes are the diverged tail and never enter the chain.
func (s *Site) PrepareReceive(request ReceiveRequest) ([]Receiver, error) {
	return perform(s, func(d Decisions, _ *Told) ([]Receiver, Effects, error) { return d.PrepareReceive(request) })
}

// PrepareReceive decides Site.PrepareReceive.
func (d Decisions) PrepareReceive(request ReceiveRequest) ([]Receiver, Effects, error) {
	return decide(d.s, func(op *Site) ([]Receiver, error) { return op.prepareReceive(request) })
}

func (s *Site) prepareReceive(request ReceiveRequest) ([]Receiver, error) {
	if request.Source.Cluster == s.config.Cluster {
		return nil, fmt.Errorf("%w: %s is local; a site does not replicate to itself", ErrInvalid, request.Source)
	}
	if request.Source.IsZero() || request.Root.IsZero() || request.Shape.SizeBytes == 0 {
		return nil, fmt.Errorf("%w: a replica needs a source, a root and a size", ErrInvalid)
	}
	r, found, err := s.replica(request.Source)
	if err != nil {
		return nil, err
	}
	if found {
		volumes, err := s.store.Volumes()
		if err != nil {
			return nil, err
		}
		if into := closedInto(r, volumes); !into.IsZero() {
			return nil, fmt.Errorf("%w: %s was failed over into %s", ErrSuperseded, r.Source, into)
		}
	}
	if !found {
		r = Replica{Source: request.Source, Root: request.Root, SourceGeneration: request.Generation,
			Shape: request.Shape, Received: map[string][]SnapshotInfo{}, CreatedAt: s.now(), OriginGUID: request.OriginGUID}
		if r.Nodes, err = s.receivers(r); err != nil {
			return nil, err
		}
		if err := s.store.PutReplica(r); err != nil {
			return nil, err
		}
	}
	receivers, err := s.addresses(r.Nodes)
	for i := range receivers {
		receivers[i].Token = s.token(r.Source)
	}
	return receivers, err
}

// receivers places a replica, preferring the nodes of the chain's newest local
// member: they hold the snapshots a fail-back delta is based on.
func (s *Site) receivers(r Replica) ([]string, error) {
	volumes, err := s.store.Volumes()
	if err != nil {
		return nil, err
	}
	var prefer []string
	for _, v := range volumes {
		if v.Root == r.Root {
			prefer = nil
			for _, a := range v.Allocation.Replicas {
				prefer = append(prefer, a.Node)
			}
			if v.Primary != "" { // the snapshots are taken on the primary: first
				prefer = append([]string{v.Primary}, slices.DeleteFunc(prefer, func(n string) bool { return n == v.Primary })...)
			}
		}
	}
	candidates, _, err := s.candidates(prefer)
	if err != nil {
		return nil, err
	}
	plan, err := placement.Place(placement.Request{Volume: r.Dataset(), SizeBytes: r.SizeBytes, PlaceCount: r.PlaceCount,
		Provisioning: r.Provisioning, ThinOvercommitPercent: s.config.ThinOvercommitPercent, AddReplicas: true}, candidates)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoCapacity, err)
	}
	chosen := slices.DeleteFunc(slices.Clone(prefer), func(n string) bool { return !slices.Contains(plan.Keep, n) })
	chosen = append(chosen, plan.Add...)
	return chosen[:min(len(chosen), r.PlaceCount)], nil
}

func (s *Site) addresses(names []string) ([]Receiver, error) {
	nodes, err := s.store.Nodes()
	if err != nil {
		return nil, err
	}
	out := make([]Receiver, 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(nodes, func(n Node) bool { return n.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("%w: node %s", ErrNotFound, name)
		}
		out = append(out, Receiver{Node: name, Address: nodes[i].Address})
	}
	return out, nil
}

func (s *Site) replica(source chain.Ref) (Replica, bool, error) {
	replicas, err := s.store.Replicas()
	return findRecord(replicas, err, func(r Replica) bool { return r.Source == source })
}

// held lists the snapshots every receiving node holds, oldest first (by the
// first node's order): the bases a next delta may start from.
func (r Replica) held() []SnapshotInfo {
	if len(r.Nodes) == 0 {
		return nil
	}
	var out []SnapshotInfo
	for _, snap := range r.Received[r.Nodes[0]] {
		everywhere := true
		for _, n := range r.Nodes[1:] {
			everywhere = everywhere && slices.Contains(r.Received[n], snap)
		}
		if everywhere {
			out = append(out, snap)
		}
	}
	return out
}

// newest returns the newest snapshot any receiving node holds, and the nodes
// that hold it: what a fail-over clones. Nodes without it catch up through
// DRBD after the clone starts.
func (r Replica) newest() (SnapshotInfo, []string, bool) {
	var best SnapshotInfo
	bestIndex := -1
	for _, n := range r.Nodes {
		snaps := r.Received[n]
		if len(snaps) == 0 {
			continue
		}
		last := snaps[len(snaps)-1]
		if i := sequenceOf(last.Name); i > bestIndex {
			best, bestIndex = last, i
		}
	}
	if bestIndex < 0 {
		return SnapshotInfo{}, nil, false
	}
	var holders []string
	for _, n := range r.Nodes {
		if slices.Contains(r.Received[n], best) {
			holders = append(holders, n)
		}
	}
	return best, holders, true
}

// sequenceOf orders snapshot names "baton-NNNNNN"; other names sort first.
func sequenceOf(name string) int {
	var n int
	if _, err := fmt.Sscanf(name, "baton-%d", &n); err != nil {
		return 0
	}
	return n
}

// Pairing returns a local member's pairing, if it has one.
func (s *Site) Pairing(source chain.Ref) (Pairing, bool, error) { return s.pairing(source) }
