package core

import (
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
)

// Demote fences a local member: its device turns read-only and it takes a
// final snapshot for its pairing, so that a planned relocation loses no
// acknowledged write. Demoting a demoted member is a no-op; a reaped member is
// ErrNotFound (rule 2: the caller knows the chain records it and answers
// success). Demote acts on exactly the member it is given: which one is the
// caller's business (rule 1, the chain's last local member).
func (s *Site) Demote(member chain.Ref) (Volume, error) {
	return perform(s, func(d Decisions, _ *Told) (Volume, Effects, error) { return d.Demote(member) })
}

// Demote decides Site.Demote. The pairing's final snapshot is ordered before
// the member is fenced: a retry after the second write failed finds the
// member Active and fences it; after the first, it orders once more.
func (d Decisions) Demote(member chain.Ref) (Volume, Effects, error) {
	return decide(d.s, func(op *Site) (Volume, error) { return op.demote(member) })
}

func (s *Site) demote(member chain.Ref) (Volume, error) {
	v, err := s.Volume(member)
	if err != nil {
		return Volume{}, err
	}
	switch v.State {
	case chain.Tombstone:
		return Volume{}, fmt.Errorf("%w: %s was reaped", ErrNotFound, member)
	case chain.Demoted:
		return v, nil
	}
	s.fence(&v)
	if v.Successor.IsZero() {
		if err := s.updatePairing(member, func(p *Pairing) { p.SyncNow(s.now()) }); err != nil {
			return Volume{}, err
		}
	}
	return v, s.store.PutVolume(v)
}

// fence makes a member read-only on every node.
func (s *Site) fence(v *Volume) {
	v.transition(chain.Demoted)
	v.FencedAt = s.now()
	v.Primary = ""
}

// LearnSuccessor records that a fail-over on another site appended successor
// after member. A member that learns of its successor acknowledges no further
// write: an Active one is fenced. Whatever it wrote after its last shipped
// snapshot -- the diverged tail -- is kept as a named snapshot and never ships:
// its pairing stops for good.
func (s *Site) LearnSuccessor(member, successor chain.Ref) error {
	_, err := perform(s, func(d Decisions, _ *Told) (struct{}, Effects, error) { return d.LearnSuccessor(member, successor) })
	return err
}

// LearnSuccessor decides Site.LearnSuccessor: the pairing pauses before the
// member learns, so a retry after either write completes the other.
func (d Decisions) LearnSuccessor(member, successor chain.Ref) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.learnSuccessor(member, successor) })
}

func (s *Site) learnSuccessor(member, successor chain.Ref) error {
	v, err := s.Volume(member)
	if err != nil {
		return err
	}
	switch {
	case v.Successor == successor:
		return nil
	case !v.Successor.IsZero():
		return fmt.Errorf("%w: %s is followed by %s, not %s", ErrConflict, member, v.Successor, successor)
	case successor.Cluster == s.config.Cluster || successor.IsZero():
		return fmt.Errorf("%w: successor %s of %s must be on another site", ErrInvalid, successor, member)
	}
	v.Successor = successor
	if v.State == chain.Active {
		s.fence(&v)
	}
	if v.State != chain.Tombstone {
		v.Tail = TailSnapshot(successor)
	}
	if err := s.updatePairing(member, func(p *Pairing) { p.Pause() }); err != nil {
		return err
	}
	return s.store.PutVolume(v)
}

// TailSnapshot names the snapshot that keeps a superseded member's diverged
// tail: everything it acknowledged, including what never shipped.
func TailSnapshot(successor chain.Ref) string {
	return "baton-tail-" + string(successor.Volume)
}

// updatePairing applies change to member's pairing, if it has one.
func (s *Site) updatePairing(member chain.Ref, change func(*Pairing)) error {
	p, found, err := s.pairing(member)
	if err != nil || !found {
		return err
	}
	change(&p)
	return s.store.PutPairing(p)
}
