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
				"relocating %s lost %d acknowledged writes of %s, the oldest acknowledged %s before the read-back",
				app, v.Lost.Acknowledged, v.Volume, v.Lost.Age)})
			continue
		}
		taken, err := origin(i)
		switch {
		case err != nil:
			broken = append(broken, Violation{InvariantLossUnchecked, fmt.Sprintf(
				"fail-over of %s lost %d acknowledged writes of %s (loss age %s) that cannot be checked against their origin: %v",
				app, v.Lost.Acknowledged, v.Volume, v.Lost.Age, err)})
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

// RPOIntervals is k of an unplanned move's RPO bound: its RPO
// (workload.VolumeVerdict.RPO: from the cut, the moment its old primary lost
// its peer, back to the recovery point the new primary holds) may be at most
// k replication intervals. Five, because an undisturbed pairing's
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

// RecoveryFloor is the oldest recovery point an unplanned move with that
// cut may fall back to: RPOIntervals intervals before the cut -- or before
// the start of a fault that disturbed replication within that span, for
// replication can catch up only once the fault ended; the start of a fault
// that ends within the span of an earlier one moves the floor again.
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

// InvariantRPOBound: an unplanned move's RPO exceeds its bound.
const InvariantRPOBound = "volume: fail-over RPO beyond its bound"

// LossesBeyond are the volumes of an unplanned move's verdict whose RPO from
// the cut exceeds the bound (cut minus floor, RecoveryFloor): the recovery
// point they fell back to is older than the floor, for replication had
// shipped nothing newer for longer than the bound allows.
func LossesBeyond(app string, verdict workload.Verdict, cut, floor time.Time, interval time.Duration) (broken []Violation) {
	bound := cut.Sub(floor)
	for _, v := range verdict.Volumes {
		rpo := v.RPO(cut)
		if rpo <= bound {
			continue
		}
		point, _ := v.RecoveryPoint()
		broken = append(broken, Violation{InvariantRPOBound, fmt.Sprintf(
			"fail-over of %s lost %d acknowledged writes of %s: RPO %s (the cut back to the recovery point %s); the bound allows %s "+
				"(%d x the %s replication interval, from the cut or the start of a fault that disturbed replication before it)",
			app, v.Lost.Acknowledged, v.Volume, rpo, point.UTC().Format(time.RFC3339Nano), bound, RPOIntervals, interval)})
	}
	return broken
}
