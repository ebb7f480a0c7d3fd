package scenarios

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// Script runs one scenario on one bed and records what happened.
type Script struct {
	Bed bed.Bed
	App bed.App
	// Chaos, when set, injects a fault at phase boundaries, chosen by rng.
	Chaos bool
	rng   *rand.Rand
	// schedule, when set, gives the faults instead of rng (chaos.go).
	schedule *Schedule
	// points are the chaos points passed so far; injected the faults
	// injected at them, drawn or scheduled.
	points   []string
	injected []Fault
	// current is the phase running, to name the hub cuts in it.
	current string
	// pace draws the story's own timing (about): how long the application
	// writes between moves and how long a site is cut off before the
	// fail-over, so that seeds fail over at other moments of the sync cycle.
	// A stream of its own: the chaos draws stay the same.
	pace   *rand.Rand
	result *reports.Result
	// hub is the bed's, for the hub's stories.
	hub bed.StorageHub
	// faults are the spans of the faults boundary injected, for the RPO
	// bound of a later fail-over.
	faults []bed.Window
}

// ErrVerification: the application's data broke a volume invariant.
var ErrVerification = errors.New("verification failed")

// phase runs one named step and checks the invariants after it.
func (s *Script) phase(name string, step func() error) error {
	p := reports.Phase{Name: name, Start: s.Bed.Now()}
	s.current = name
	err := s.boundary(name)
	if err == nil {
		err = step()
	}
	p.End, p.OK = s.Bed.Now(), err == nil
	if err != nil {
		p.Note = err.Error()
	}
	s.result.Phases = append(s.result.Phases, p)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if violations := s.Bed.Violations(); len(violations) > 0 {
		return fmt.Errorf("%s: %d invariant violations, first: %s", name, len(violations), violations[0].Message)
	}
	return nil
}

// about is d varied by the seed: drawn from [d/2, 3d/2), to the second.
func (s *Script) about(d time.Duration) time.Duration {
	return (d/2 + time.Duration(s.pace.Int64N(int64(d)))).Round(time.Second)
}

// FaultClasses name the faults boundary injects, for the chaos command to
// list.
var FaultClasses = []string{
	"partition: the hub and the sites cut apart, one- or two-way",
	"degraded link: the sites' link slow, lossy, duplicating and reordering",
	"operator crash: a site's operator stopped and restarted",
	"node crash: a storage node powered off and restarted",
	"disk full: a storage node's pool filled by a runaway writer, then freed",
	"API errors: a site's storage API and API server, or the hub's, failing 10-50% of calls (500, 503, 429, 409, lost answers)",
	"store faults: a site's record store failing 10-50% of its writes, half after they took effect",
}

// verify reads the application where it runs and judges its data. planned
// demands that no acknowledged write was lost.
func (s *Script) verify(planned bool) (workload.Verdict, error) {
	v, err := s.Bed.Verify(s.App.Name)
	if err != nil {
		return v, err
	}
	return v, judge(v, planned)
}

// judge applies the volume invariants to a verdict: the data is a consistent
// prefix of the writes, and a planned step loses no acknowledged write.
func judge(v workload.Verdict, planned bool) error {
	if !v.Consistent() {
		return fmt.Errorf("%w: %s", ErrVerification, v.String())
	}
	if planned && v.LostAcknowledged() > 0 {
		return fmt.Errorf("%w: a planned step lost %d acknowledged writes", ErrVerification, v.LostAcknowledged())
	}
	return nil
}

// relocate moves the application in a planned way and checks nothing was lost.
func (s *Script) relocate(to string) error {
	return s.phase("relocate to "+to, func() error {
		from, err := s.Bed.Where(s.App.Name)
		if err != nil {
			return err
		}
		start := s.Bed.Now()
		v, err := s.Bed.Relocate(s.App.Name, to)
		if err != nil {
			return err
		}
		s.recordFailover(v, from, to, start, time.Time{})
		return judge(v, true)
	})
}

// failover isolates the application's site and fails over to the other one.
func (s *Script) failover(to string) error {
	var from string
	var cut time.Time
	if err := s.phase("isolate the primary site", func() error {
		var err error
		if from, err = s.Bed.Where(s.App.Name); err != nil {
			return err
		}
		cut = s.Bed.Now()
		for _, other := range append([]string{"hub"}, s.Bed.Sites()...) {
			if other != from {
				s.Bed.Partition(from, other, true)
			}
		}
		return s.Bed.Run(s.about(30 * time.Second))
	}); err != nil {
		return err
	}
	return s.phase("fail over to "+to, func() error {
		start := s.Bed.Now()
		v, err := s.Bed.Failover(s.App.Name, to)
		if err != nil {
			return err
		}
		s.recordFailover(v, from, to, start, cut)
		if err := judge(v, false); err != nil {
			return err
		}
		return s.withinRPOBound(v, cut)
	})
}

// withinRPOBound holds an unplanned move to its RPO bound (bed.RecoveryFloor):
// each volume's RPO from the cut may be at most the cut minus the floor. A
// bed that cannot state its replication interval fails it, for a check that
// could not run never passes.
func (s *Script) withinRPOBound(v workload.Verdict, cut time.Time) error {
	paced, err := bed.Can[bed.Paced](s.Bed, "the RPO bound of a fail-over")
	if err != nil {
		return err
	}
	interval, err := paced.ReplicationInterval()
	if err != nil {
		return fmt.Errorf("the RPO bound of a fail-over: %w", err)
	}
	floor := bed.RecoveryFloor(cut, interval, s.disturbances())
	moved := s.result.Failovers[len(s.result.Failovers)-len(v.Volumes):]
	for i, vol := range v.Volumes {
		if vol.Lost.Acknowledged > 0 {
			moved[i].RPOBound = cut.Sub(floor)
		}
	}
	if broken := bed.LossesBeyond(s.App.Name, v, cut, floor, interval); len(broken) > 0 {
		return fmt.Errorf("%w: %s", ErrVerification, broken[0].Message)
	}
	return nil
}

// disturbances are the faults that may have disturbed replication: the
// story's own, and on shared sites those of the runs beside it.
func (s *Script) disturbances() []bed.Window {
	shared, ok := s.Bed.(bed.SharedSites)
	if !ok {
		return s.faults
	}
	return append(slices.Clone(s.faults), shared.FaultsBeside()...)
}

// recordFailover records a move's figures per volume. failure is the cut
// that triggered an unplanned move, zero for a planned one, whose decision
// (start) stands in for it: the RPO runs from the failure back to the
// recovery point the new site holds, the RTO from the failure until the
// application serves there (Failover and Relocate return once it resumed).
func (s *Script) recordFailover(v workload.Verdict, from, to string, start, failure time.Time) {
	planned := failure.IsZero()
	if planned {
		failure = start
	}
	served := s.Bed.Now()
	for _, vol := range v.Volumes {
		s.result.Failovers = append(s.result.Failovers, reports.Failover{App: s.App.Name, Volume: vol.Volume,
			From: from, To: to, Planned: planned, At: start, LostWrites: vol.Lost.Acknowledged, RPO: vol.RPO(failure),
			RTO: served.Sub(failure), LossAge: vol.Lost.Age})
	}
}
