package replication

import (
	"fmt"
	"slices"
	"time"

	"github.com/baton-dr/baton/storage/chain"
)

// Shipment is one stream the pairing owes its target.
type Shipment struct {
	Target   chain.ClusterID
	Snapshot string
	GUID     string
	Base     Base
}

// Work is what the pairing wants done now. The control plane turns it into node
// work; repeating it is harmless (snapshots are named, streams idempotent).
type Work struct {
	Snapshot string    // take this snapshot of the source; empty for none
	Ship     *Shipment // ship this snapshot; nil for none
	Prune    []string  // destroy these snapshots of the source, oldest first
}

// retryBase is the first backoff after a failed shipment; it doubles per
// failure up to the pairing's interval.
const retryBase = time.Second

// Tick orders the next snapshot once it is due.
func (p *Pairing) Tick(now time.Time) {
	if p.Phase != Idle || now.Before(p.Due) {
		return
	}
	p.Sequence++
	p.Snapshots = append(p.Snapshots, Snapshot{Name: SnapshotName(p.Sequence), OrderedAt: now})
	p.transition(Snapshotting)
	p.Due = now.Add(p.Interval)
}

// SnapshotName is the name of a pairing's n-th snapshot.
func SnapshotName(n uint64) string { return fmt.Sprintf("baton-%06d", n) }

// SyncNow makes the next snapshot due at once: a final sync after a fence, or a
// resync. A snapshot already in flight ships first; the next one follows it.
func (p *Pairing) SyncNow(now time.Time) {
	if p.Due.After(now) {
		p.Due = now
	}
	if p.Phase == Paused {
		p.transition(Idle)
	}
}

// Want reports what the pairing wants done at now.
func (p *Pairing) Want(now time.Time) Work {
	var w Work
	switch p.Phase {
	case Snapshotting:
		w.Snapshot = p.newest().Name
	case Shipping:
		if !now.Before(p.RetryAt) {
			s := p.newest()
			w.Ship = &Shipment{Target: p.Target, Snapshot: s.Name, GUID: s.GUID, Base: p.Base}
		}
	}
	w.Prune = p.prunable()
	return w
}

// Taken records that the ordered snapshot exists, reported at. It reports
// whether the input applied; a late or unknown one is ignored. Its recovery
// point is when it was ordered; a snapshot ordered before OrderedAt was
// recorded (a record of an earlier version) falls back to the report's time.
func (p *Pairing) Taken(name, guid string, at time.Time) bool {
	if p.Phase != Snapshotting || p.newest().Name != name || guid == "" {
		return false
	}
	s := &p.Snapshots[len(p.Snapshots)-1]
	s.GUID, s.TakenAt = guid, at
	if !s.OrderedAt.IsZero() && s.OrderedAt.Before(at) {
		s.TakenAt = s.OrderedAt
	}
	p.transition(Shipping)
	p.RetryAt = at
	return true
}

// Shipped records that the target holds the snapshot in flight: it becomes the
// base of the next delta.
func (p *Pairing) Shipped(name string, bytes uint64, started, at time.Time) bool {
	if p.Phase != Shipping || p.newest().Name != name {
		return false
	}
	s := &p.Snapshots[len(p.Snapshots)-1]
	s.ShippedAt = at
	p.Base = Base{Snapshot: s.Name, GUID: s.GUID}
	p.Last = Sync{At: at, Duration: at.Sub(started), Bytes: bytes, Snapshot: s.Name}
	p.Failures, p.LastError = 0, ""
	p.transition(Idle)
	return true
}

// Failed records a failed shipment of the snapshot in flight; it is retried with
// a backoff that doubles up to the interval.
func (p *Pairing) Failed(name, reason string, at time.Time) bool {
	if p.Phase != Shipping || p.newest().Name != name {
		return false
	}
	p.Failures++
	p.LastError = reason
	backoff := p.Interval
	if p.Failures < 32 && retryBase<<(p.Failures-1) < backoff {
		backoff = retryBase << (p.Failures - 1)
	}
	p.RetryAt = at.Add(backoff)
	return true
}

// Pruned records that a snapshot of the source is gone.
func (p *Pairing) Pruned(name string) bool {
	i := slices.IndexFunc(p.Snapshots, func(s Snapshot) bool { return s.Name == name })
	if i < 0 || !slices.Contains(p.prunable(), name) {
		return false
	}
	p.Snapshots = slices.Delete(p.Snapshots, i, i+1)
	return true
}

// Pause stops taking snapshots (Disable, or a reaped source). A snapshot in
// flight is abandoned; the source keeps it.
func (p *Pairing) Pause() {
	if p.Phase == Snapshotting {
		p.Snapshots = p.Snapshots[:len(p.Snapshots)-1]
	}
	p.transition(Paused)
}

// Reaim points the pairing at another target, shipping from base: the newest
// snapshot the new target is known to hold (see CommonBase). What was shipped to
// the old target says nothing about the new one, except the base itself.
func (p *Pairing) Reaim(target chain.ClusterID, base Base, now time.Time) {
	if p.Target == target && p.Base == base {
		return
	}
	p.Target, p.Base = target, base
	for i := range p.Snapshots {
		s := &p.Snapshots[i]
		switch {
		case base.Volume == "" && s.Name == base.Snapshot:
			if !s.Shipped() {
				s.ShippedAt = now // the new target holds it already
			}
		default:
			s.ShippedAt = time.Time{}
		}
	}
	p.Failures, p.LastError, p.RetryAt = 0, "", now
	if p.Phase == Shipping && p.newest().Name == base.Snapshot && base.Volume == "" {
		p.transition(Idle) // the target already holds what was in flight
	}
	p.SyncNow(now)
}

// InSyncSince reports whether the target holds a snapshot taken at or after t:
// the final sync of a fenced source, or the first delta of a resync.
func (p *Pairing) InSyncSince(t time.Time) bool {
	for i := len(p.Snapshots) - 1; i >= 0; i-- {
		s := p.Snapshots[i]
		if s.Shipped() && !s.TakenAt.Before(t) {
			return true
		}
	}
	return false
}

// NewestShipped returns the newest snapshot the target holds, if any.
func (p *Pairing) NewestShipped() (Snapshot, bool) {
	for i := len(p.Snapshots) - 1; i >= 0; i-- {
		if p.Snapshots[i].Shipped() {
			return p.Snapshots[i], true
		}
	}
	return Snapshot{}, false
}

func (p *Pairing) newest() Snapshot {
	if len(p.Snapshots) == 0 {
		panic(fmt.Sprintf("replication: pairing %s→%s in phase %s has no snapshot", p.Source, p.Target, p.Phase))
	}
	return p.Snapshots[len(p.Snapshots)-1]
}

// prunable lists the snapshots retention lets go: older than the base, outside
// the newest Retention, never the base or one in flight.
func (p *Pairing) prunable() []string {
	baseIndex := -1
	if p.Base.Volume == "" && p.Base.Snapshot != "" {
		baseIndex = slices.IndexFunc(p.Snapshots, func(s Snapshot) bool { return s.Name == p.Base.Snapshot })
	}
	keepFrom := len(p.Snapshots) - p.Retention
	var out []string
	for i, s := range p.Snapshots {
		if i >= keepFrom || i >= baseIndex || !s.Taken() {
			break
		}
		out = append(out, s.Name)
	}
	return out
}

// CommonBase picks the base for shipping to a target that holds the snapshots
// with the given GUIDs: the newest of the pairing's snapshots it holds, else the
// source's origin (a clone stream from the snapshot the source was cloned from),
// else nothing (a full stream).
func CommonBase(snapshots []Snapshot, origin Base, held []string) Base {
	for i := len(snapshots) - 1; i >= 0; i-- {
		s := snapshots[i]
		if s.Taken() && slices.Contains(held, s.GUID) {
			return Base{Snapshot: s.Name, GUID: s.GUID}
		}
	}
	if origin.Snapshot != "" && slices.Contains(held, origin.GUID) {
		return origin
	}
	return Base{}
}
