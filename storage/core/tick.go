package core

import (
	"slices"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/replication"
)

// Tick moves time-driven work: snapshots come due, targets that were away are
// asked for receivers again, successors are announced to sites that missed
// it, fail-overs whose replica was not closed yet are completed, and demoted
// members whose successor's stream has arrived are reaped.
func (s *Site) Tick() error {
	_, err := perform(s, func(d Decisions, _ *Told) (struct{}, Effects, error) { return d.Tick() })
	return err
}

// Tick decides Site.Tick over every chain of the site.
func (d Decisions) Tick() (struct{}, Effects, error) { return d.tick(everyChain) }

// TickChain decides Site.Tick for the records of root's chain alone: a shell
// ticks chain by chain, each under its own lock.
func (d Decisions) TickChain(root chain.Ref) (struct{}, Effects, error) {
	return d.tick(onlyChain(root))
}

func (d Decisions) tick(in scope) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.tick(in) })
}

// scope tells which chains' records a decision touches.
type scope func(root chain.Ref) bool

func everyChain(chain.Ref) bool { return true }

func onlyChain(root chain.Ref) scope { return func(r chain.Ref) bool { return r == root } }

func (s *Site) tick(in scope) error {
	volumes, err := s.store.Volumes()
	if err != nil {
		return err
	}
	if err := s.tickPairings(in, volumes); err != nil {
		return err
	}
	for _, v := range volumes {
		if in(v.Root) {
			s.announce(v)
		}
	}
	replicas, err := s.store.Replicas()
	if err != nil {
		return err
	}
	if err := s.closeReplicas(in, volumes, replicas); err != nil {
		return err
	}
	return s.reap(in, volumes, replicas)
}

// tickPairings ticks the pairings of the members in scope; a pairing without
// its member (a fail-over's first write alone) waits for it.
func (s *Site) tickPairings(in scope, volumes []Volume) error {
	pairings, err := s.store.Pairings()
	if err != nil {
		return err
	}
	now := s.now()
	for _, p := range pairings {
		i := slices.IndexFunc(volumes, func(v Volume) bool { return v.Ref == p.Source })
		if i < 0 || !in(volumes[i].Root) {
			continue
		}
		before := p.clone()
		if len(p.Receivers) == 0 && p.Phase != replication.Paused {
			s.askReceivers(volumes[i], p)
		}
		p.Tick(now)
		if !equalPairing(before, p) {
			if err := s.store.PutPairing(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeReplicas writes the closing of replicas a fail-over recorded a
// successor of but could not close (its last write failed, and the caller
// that would have retried it found the chain's end here).
func (s *Site) closeReplicas(in scope, volumes []Volume, replicas []Replica) error {
	for _, r := range replicas {
		if !in(r.Root) {
			continue
		}
		if into := closedInto(r, volumes); r.ClonedInto.IsZero() && !into.IsZero() {
			r.ClonedInto = into
			if err := s.store.PutReplica(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// reap turns a demoted member into a tombstone once its successor's stream
// has arrived here: the chain's data is safe on both sites again, and the old
// member's device can go. Its record and snapshots stay.
func (s *Site) reap(in scope, volumes []Volume, replicas []Replica) error {
	for _, v := range volumes {
		if v.State != chain.Demoted || v.Successor.IsZero() || !in(v.Root) {
			continue
		}
		i := slices.IndexFunc(replicas, func(r Replica) bool { return r.Source == v.Successor })
		if i < 0 {
			continue
		}
		if _, _, arrived := replicas[i].newest(); !arrived {
			continue
		}
		v.transition(chain.Tombstone)
		if err := s.store.PutVolume(v); err != nil {
			return err
		}
	}
	return nil
}

func equalPairing(a, b Pairing) bool {
	return a.Phase == b.Phase && a.Sequence == b.Sequence && a.Due.Equal(b.Due) &&
		slices.Equal(a.Receivers, b.Receivers) && a.LastError == b.LastError && len(a.Snapshots) == len(b.Snapshots)
}
