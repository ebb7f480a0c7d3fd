package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/replication"
)

// Resync is addressed to the chain's end (rule 4). On an Active end it
// re-aims the end's replication at the fail-back source -- the site that calls,
// whose old member was demoted -- from the newest snapshot both sites hold, so
// only the delta ships. On a Demoted end (a relocation's old primary) there is
// nothing to re-aim; it waits for the final sync. ready reports that the target
// holds a snapshot taken after the re-aim (or after the fence).
func (s *Site) Resync(end chain.Ref, failbackSource chain.ClusterID) (ready bool, err error) {
	return perform(s, func(d Decisions, told *Told) (bool, Effects, error) { return d.Resync(end, failbackSource, told) })
}

// Resync decides Site.Resync; told is what the fail-back source holds of the
// chain, which re-aiming asks for.
func (d Decisions) Resync(end chain.Ref, failbackSource chain.ClusterID, told *Told) (bool, Effects, error) {
	return decide(d.s, func(op *Site) (bool, error) { return op.resync(end, failbackSource, told) })
}

func (s *Site) resync(end chain.Ref, failbackSource chain.ClusterID, told *Told) (bool, error) {
	v, err := s.Volume(end)
	if err != nil {
		return false, err
	}
	switch v.State {
	case chain.Tombstone:
		return false, fmt.Errorf("%w: %s was reaped", ErrNotFound, end)
	case chain.Demoted:
		if !v.Successor.IsZero() {
			return false, fmt.Errorf("%w: %s is followed by %s; resync its chain's end", ErrSuperseded, end, v.Successor)
		}
		p, found, err := s.pairing(end)
		return found && p.InSyncSince(v.FencedAt), err
	}
	if failbackSource == s.config.Cluster || failbackSource == "" {
		return false, fmt.Errorf("%w: the fail-back source of %s must be another site", ErrInvalid, end)
	}
	p, found, err := s.pairing(end)
	if err != nil {
		return false, err
	}
	switch {
	case !found || p.Target != failbackSource:
		q := Question{Kind: AskHoldings, Cluster: failbackSource, Root: v.Root}
		held, ok := answerTo(told, q)
		if !ok {
			s.ask(q)
			return false, nil
		}
		if p, err = s.aim(v, p, found, failbackSource, held); err != nil {
			return false, err
		}
	case p.ReaimedAt.IsZero():
		// Aimed at the fail-back source already (a fail-over clone ships back
		// to its predecessor's site from birth): its base stands. Asking the
		// source what it holds now could only move the base backwards -- what
		// its nodes received may not have reached its records yet.
		p.ReaimedAt = s.now()
		p.SyncNow(p.ReaimedAt)
		if err := s.store.PutPairing(p); err != nil {
			return false, err
		}
	}
	return p.InSyncSince(p.ReaimedAt) && p.Failures == 0, nil
}

// aim points v's pairing (creating it if need be) at target, from the newest
// snapshot target holds (held: what it answered).
func (s *Site) aim(v Volume, p Pairing, found bool, target chain.ClusterID, held Told) (Pairing, error) {
	if errors.Is(held.Err, chain.ErrUnreachable) {
		return Pairing{}, fmt.Errorf("%w: cannot ask %s what it holds of %s: %w", ErrPeerUnreachable, target, v.Root, held.Err)
	}
	if held.Err != nil {
		return Pairing{}, held.Err
	}
	origin := replication.Base{Volume: v.Origin.Dataset, Snapshot: v.Origin.Snapshot, GUID: v.Origin.GUID}
	base := replication.CommonBase(p.Snapshots, origin, held.Holdings)
	now := s.now()
	if !found {
		fresh, err := replication.New(v.Ref, target, s.config.Interval, s.config.Retention, base, now)
		if err != nil {
			return Pairing{}, err
		}
		p = Pairing{Pairing: *fresh}
	} else {
		p.Reaim(target, base, now)
	}
	p.ReaimedAt = now
	p.Receivers = nil // asked again below, and by Tick while the target is away
	s.askReceivers(v, p)
	return p, s.store.PutPairing(p)
}

// askReceivers leaves the request that asks p's target for the nodes that
// take its streams; the answer comes back through receiversAnswered.
func (s *Site) askReceivers(v Volume, p Pairing) {
	s.send(Request{Kind: AskReceivers, Target: p.Target, Receive: ReceiveRequest{Source: v.Ref, Root: v.Root,
		Generation: v.Generation, Shape: v.Shape, OriginGUID: v.Origin.GUID}, Root: v.Root})
}

// receiversAnswered takes in a target's receivers for a pairing still aimed
// at it; a target that superseded the source pauses the pairing for good.
func (s *Site) receiversAnswered(a Answer) error {
	p, found, err := s.pairing(a.Receive.Source)
	if err != nil || !found || p.Target != a.Target {
		return err // the pairing went, or was re-aimed since the request left
	}
	before := p.clone()
	switch {
	case a.Err == nil:
		p.Receivers = a.Receivers
	case errors.Is(a.Err, ErrSuperseded):
		p.Pause()
		p.LastError = a.Err.Error()
	default:
		p.LastError = a.Err.Error()
	}
	if equalPairing(before, p) {
		return nil
	}
	return s.store.PutPairing(p)
}

// Health summarises a pairing for GetVolumeReplicationInfo.
type Health uint8

const (
	HealthUnknown Health = iota
	Healthy
	Degraded
)

func (h Health) String() string {
	switch h {
	case Healthy:
		return "Healthy"
	case Degraded:
		return "Degraded"
	}
	return "Unknown"
}

// Status is a member's replication status (rule 4: read from the chain's end).
type Status struct {
	Member           chain.Ref
	Target           chain.ClusterID
	LastSyncTime     time.Time
	LastSyncDuration time.Duration
	LastSyncBytes    uint64
	Health           Health
	Message          string
}

// Status reports the replication of a local member.
func (s *Site) Status(member chain.Ref) (Status, error) {
	v, err := s.Volume(member)
	if err != nil {
		return Status{}, err
	}
	st := Status{Member: member}
	p, found, err := s.pairing(member)
	if err != nil {
		return Status{}, err
	}
	switch {
	case v.State == chain.Tombstone:
		return Status{}, fmt.Errorf("%w: %s was reaped", ErrNotFound, member)
	case !found:
		st.Message = "not replicated"
		return st, nil
	}
	st.Target = p.Target
	st.LastSyncTime, st.LastSyncDuration, st.LastSyncBytes = p.Last.At, p.Last.Duration, p.Last.Bytes
	stale := !p.Last.At.IsZero() && s.now().Sub(p.Last.At) > 3*p.Interval
	switch {
	case p.Phase == replication.Paused:
		st.Health, st.Message = Degraded, "replication paused"
	case p.Failures > 0:
		st.Health, st.Message = Degraded, fmt.Sprintf("%d failed shipments: %s", p.Failures, p.LastError)
	case p.Last.At.IsZero():
		st.Health, st.Message = HealthUnknown, "no snapshot shipped yet"
	case stale:
		st.Health, st.Message = Degraded, fmt.Sprintf("last sync %s ago", s.now().Sub(p.Last.At))
	default:
		st.Health, st.Message = Healthy, "in sync"
	}
	return st, nil
}
