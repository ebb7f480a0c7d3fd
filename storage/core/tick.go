package core

import (
	"slices"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/replication"
)

// Tick moves time-driven work: snapshots come due, targets that were away are
// asked for receivers again, successors are announced to sites that missed
// it, and demoted members whose successor's stream has arrived are reaped.
func (s *Site) Tick() error {
	if err := s.tickPairings(); err != nil {
		return err
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return err
	}
	for i := range volumes {
		s.announce(&volumes[i])
	}
	return s.reap()
}

func (s *Site) tickPairings() error {
	pairings, err := s.store.Pairings()
	if err != nil {
		return err
	}
	now := s.now()
	for _, p := range pairings {
		before := p.clone()
		if len(p.Receivers) == 0 && p.Phase != replication.Paused {
			if v, err := s.Volume(p.Source); err == nil {
				s.prepareReceivers(v, &p)
			}
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

// reap turns a demoted member into a tombstone once its successor's stream
// has arrived here: the chain's data is safe on both sites again, and the old
// member's device can go. Its record and snapshots stay.
func (s *Site) reap() error {
	volumes, err := s.store.Volumes()
	if err != nil {
		return err
	}
	replicas, err := s.store.Replicas()
	if err != nil {
		return err
	}
	for _, v := range volumes {
		if v.State != chain.Demoted || v.Successor.IsZero() {
			continue
		}
		i := slices.IndexFunc(replicas, func(r Replica) bool { return r.Source == v.Successor })
		if i < 0 || len(replicas[i].held()) == 0 {
			continue
		}
		v.State = chain.Tombstone
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
