package bed

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/workload"
)

// Violation is a broken invariant, as a bed records it.
type Violation struct {
	Invariant, Message string
}

// Invariants of a move's losses.
const (
	// InvariantPlannedLoss: a planned move lost acknowledged writes.
	InvariantPlannedLoss = "volume: planned move lost acknowledged writes"
	// InvariantLostSynced: a fail-over lost a write its recovery point held.
	InvariantLostSynced = "volume: lost a write the last sync carried"
	// InvariantLossUnchecked: a fail-over lost writes and the bed could not
	// find the recovery point to check them against. A check that could not
	// run is a failure, never a pass: the loss may be anything.
	InvariantLossUnchecked = "volume: loss not checked against its origin"
)

// MoveLosses holds the volume invariant of a move of app, the same on every
// bed: a planned move loses no acknowledged write; an unplanned one loses
// only writes acknowledged after the snapshot its new member was cloned from
// was ordered (the recovery point). origin finds that time for volume i of
// the verdict; an error there is itself a violation (InvariantLossUnchecked).
// at renders a time the way the bed's reports do.
func MoveLosses(app string, verdict workload.Verdict, planned bool,
	origin func(i int) (time.Time, error), at func(time.Time) string) (broken []Violation) {
	for i, v := range verdict.Volumes {
		if v.Lost.Acknowledged == 0 {
			continue
		}
		if planned {
			broken = append(broken, Violation{InvariantPlannedLoss, fmt.Sprintf(
				"relocating %s lost %d acknowledged writes of %s, the oldest acknowledged %s before the move",
				app, v.Lost.Acknowledged, v.Volume, v.Lost.RPO)})
			continue
		}
		taken, err := origin(i)
		switch {
		case err != nil:
			broken = append(broken, Violation{InvariantLossUnchecked, fmt.Sprintf(
				"fail-over of %s lost %d acknowledged writes of %s (RPO %s) that cannot be checked against their origin: %v",
				app, v.Lost.Acknowledged, v.Volume, v.Lost.RPO, err)})
		case v.Lost.Oldest.Before(taken):
			broken = append(broken, Violation{InvariantLostSynced, fmt.Sprintf(
				"fail-over of %s lost a write to %s acknowledged at %s, before the snapshot it was cloned from was ordered (%s)",
				app, v.Volume, at(v.Lost.Oldest), at(taken))})
		}
	}
	return broken
}

// Paced is a bed whose sites replicate on a schedule it can state: what an
// unplanned move's RPO bound is stated against.
type Paced interface {
	// ReplicationInterval is the sites' snapshot interval, in the bed's time.
	ReplicationInterval() (time.Duration, error)
}

// RPOIntervals is k of an unplanned move's RPO bound: it may lose only writes
// acknowledged less than k replication intervals before the cut (the moment
// its old primary lost its peer). Five, because an undisturbed pairing's
// newest shipped snapshot is at most three intervals old at any moment --
// one until the next snapshot is due; one for the site to order it and the
// node to take and report it (the sites' and the nodes' 1 s ticks are half
// the local bed's 2 s interval); one to ship it and have it reported
// received (a failed shipment's retry backoff is capped at one interval,
// too) -- and two of slack for a loaded machine's wall clock: the local bed
// measured 3.3 and 3.5 intervals at load 25-28 on 2 cores.
const RPOIntervals = 5

// Window is a span of a bed's time: a fault from its start to its end.
type Window struct {
	Start, End time.Time
}

// RecoveryFloor is the oldest write an unplanned move with that cut may lose:
// RPOIntervals intervals before the cut -- or before the start of a fault
// that disturbed replication within that span, for replication can catch up
// only once the fault ended; the start of a fault that ends within the
// span of an earlier one moves the floor again.
func RecoveryFloor(cut time.Time, interval time.Duration, faults []Window) time.Time {
	span := RPOIntervals * interval
	from := cut
	for moved := true; moved; {
		moved = false
		for _, f := range faults {
			end := f.End
			if end.IsZero() || end.After(cut) {
				end = cut // still on at the cut
			}
			if f.Start.Before(from) && end.After(from.Add(-span)) {
				from, moved = f.Start, true
			}
		}
	}
	return from.Add(-span)
}

// InvariantRPOBound: an unplanned move lost writes older than its RPO bound.
const InvariantRPOBound = "volume: fail-over lost writes beyond the RPO bound"

// LossesBeyond are the volumes of an unplanned move's verdict that lost a
// write acknowledged before floor (RecoveryFloor): replication had shipped
// nothing newer for longer than the bound allows.
func LossesBeyond(app string, verdict workload.Verdict, cut, floor time.Time, interval time.Duration) (broken []Violation) {
	for _, v := range verdict.Volumes {
		if v.Lost.Acknowledged == 0 || !v.Lost.Oldest.Before(floor) {
			continue
		}
		broken = append(broken, Violation{InvariantRPOBound, fmt.Sprintf(
			"fail-over of %s lost %d acknowledged writes of %s, the oldest %s before the cut (RPO %s); the bound allows %s "+
				"(%d x the %s replication interval, from the cut or the start of a fault that disturbed replication before it)",
			app, v.Lost.Acknowledged, v.Volume, cut.Sub(v.Lost.Oldest), v.Lost.RPO, cut.Sub(floor), RPOIntervals, interval)})
	}
	return broken
}
