package core

import (
	"errors"
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/replication"
)

// Enable makes a local member ship to target. It is idempotent; an existing
// pairing to another target is left alone (Resync re-aims). When target cannot
// be asked what it holds, the first stream is a full one -- received into a new
// replica dataset, it never touches what the target already has.
func (s *Site) Enable(member chain.Ref, target chain.ClusterID) (Pairing, error) {
	return perform(s, func(d Decisions, told *Told) (Pairing, Effects, error) { return d.Enable(member, target, told) })
}

// Enable decides Site.Enable; told is what target holds of the chain, which
// a new pairing asks for.
func (d Decisions) Enable(member chain.Ref, target chain.ClusterID, told *Told) (Pairing, Effects, error) {
	return decide(d.s, func(op *Site) (Pairing, error) { return op.enable(member, target, told) })
}

func (s *Site) enable(member chain.Ref, target chain.ClusterID, told *Told) (Pairing, error) {
	v, err := s.Volume(member)
	if err != nil {
		return Pairing{}, err
	}
	if v.State != chain.Active {
		return Pairing{}, fmt.Errorf("%w: %s is %s; only an Active member ships", ErrInvalid, member, v.State)
	}
	if target == s.config.Cluster || target == "" {
		return Pairing{}, fmt.Errorf("%w: target %q of %s must be another site", ErrInvalid, target, member)
	}
	p, found, err := s.pairing(member)
	if err != nil || found {
		return p, err
	}
	q := Question{Kind: AskHoldings, Cluster: target, Root: v.Root}
	held, ok := answerTo(told, q)
	if !ok {
		s.ask(q)
		return Pairing{}, nil
	}
	if held.Err != nil && !errors.Is(held.Err, chain.ErrUnreachable) {
		return Pairing{}, held.Err
	}
	origin := replication.Base{Volume: v.Origin.Dataset, Snapshot: v.Origin.Snapshot, GUID: v.Origin.GUID}
	fresh, err := replication.New(member, target, s.config.Interval, s.config.Retention,
		replication.CommonBase(nil, origin, held.Holdings), s.now())
	if err != nil {
		return Pairing{}, err
	}
	p = Pairing{Pairing: *fresh}
	s.askReceivers(v, p)
	return p, s.store.PutPairing(p)
}

// Disable stops a local member's replication. Only the pairing's record goes:
// snapshots stay on the source, and the replica on the other site is that
// site's to drop -- cleaning up one side never destroys the other's data.
func (s *Site) Disable(member chain.Ref) error {
	_, err := perform(s, func(d Decisions, _ *Told) (struct{}, Effects, error) { return d.Disable(member) })
	return err
}

// Disable decides Site.Disable.
func (d Decisions) Disable(member chain.Ref) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.disable(member) })
}

func (s *Site) disable(member chain.Ref) error {
	if _, err := s.Volume(member); err != nil {
		return err
	}
	err := s.store.RemovePairing(member)
	if errors.Is(err, ErrStoreNotFound) {
		return nil
	}
	return err
}
