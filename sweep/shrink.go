package sweep

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
)

// Shrinking reduces a failing chaos run's fault schedule to the faults the
// failure needs, the way pebble's metamorphic reducer reduces an ops file:
//
//  1. the schedule the seed drew is replayed as a schedule: it must fail the
//     same way, or there is nothing to shrink;
//  2. no faults at all is tried first (a failure that needs none shrinks to
//     the empty schedule in one run);
//  3. random subsets are deleted -- at least one fault, and each other with a
//     probability that halves whenever a round of attempts finds no smaller
//     schedule that still fails -- down to where a round deletes about one;
//  4. every single fault is tried without, until none can be dropped;
//  5. each survivor is made as short as it can be (its duration halved while
//     the failure stays) and moved as late as it can be (the latest chaos
//     point at which it still fails), and step 4 runs again, until a whole
//     round changes nothing.
//
// Every re-run is a simulation of the same seed with a given schedule, so
// the shrink is deterministic: the same failing seed shrinks to the same
// schedule in the same re-runs. Faults a re-run never reached (its story
// ended before their point) are dropped from what it keeps.
//
// "Still fails" means fails the same way (FailureOf): the same invariant
// the bed's checkers reported first or, when none did, the same step whose
// error ended the run. A run failing another way is as good as a pass: its
// schedule is not kept.

// ErrPasses: the run to shrink passes; there is nothing to shrink.
var ErrPasses = errors.New("the run passes: there is no failure to shrink")

// ShrinkOptions bound a shrink.
type ShrinkOptions struct {
	// MaxRuns bounds the re-runs (0: DefaultShrinkRuns); a shrink that
	// reaches it returns the smallest schedule found so far.
	MaxRuns int
	// Progress, when set, hears every schedule kept.
	Progress func(step string, kept scenarios.Schedule)
}

// DefaultShrinkRuns bounds a shrink's re-runs when ShrinkOptions do not.
const DefaultShrinkRuns = 300

// shortestFault is as short as a shrink makes a fault: shorter faults are
// a moment's hiccup whatever the class.
const shortestFault = time.Second

// Shrunk is a shrink's outcome.
type Shrunk struct {
	// Original is the schedule the seed drew; Minimal what the failure
	// needs of it.
	Original, Minimal scenarios.Schedule
	// Failure is how both fail (FailureOf).
	Failure string
	// Runs counts the re-runs, the first run and the replay included.
	Runs int
	// Exhausted: MaxRuns ended the shrink before no fault could be dropped.
	Exhausted bool
	// Result is the minimal schedule's failing run.
	Result reports.Result
}

// FailureOf says how a run failed: "invariant: X" for the first invariant
// the bed's checkers reported, else "step: P" for the step whose error ended
// the run; "" for a pass. A bed that errored has no failure to keep, and a
// seeded bug's miss is a pass.
func FailureOf(r reports.Result) string {
	if r.Verdict != reports.Failed {
		return ""
	}
	for _, v := range r.Violations {
		if v.Invariant != "scenario" && v.Invariant != reports.BugMissed {
			return "invariant: " + v.Invariant
		}
	}
	for i := len(r.Phases) - 1; i >= 0; i-- {
		if !r.Phases[i].OK {
			return "step: " + r.Phases[i].Name
		}
	}
	if r.Error != "" {
		return "step: " + r.Error
	}
	return ""
}

// rerun runs the seed again with the faults given.
type rerun func(faults []scenarios.Fault) (reports.Result, scenarios.Chaos)

// shrinker holds one shrink's state between its steps.
type shrinker struct {
	rerun    rerun
	name     string
	seed     uint64
	options  ShrinkOptions
	failure  string
	runs     int
	faults   []scenarios.Fault
	points   []string
	result   reports.Result
	rng      *rand.Rand
	exceeded bool
}

// Shrink reduces the fault schedule the seed draws for the scenario under
// chaos to what its failure needs, on the simulation.
func Shrink(sc scenarios.Scenario, seed uint64, options ShrinkOptions) (Shrunk, error) {
	first, drawn := OneWith(sc, seed, RunOptions{Chaos: true})
	return shrink(sc.Name, seed, first, drawn, func(faults []scenarios.Fault) (reports.Result, scenarios.Chaos) {
		schedule := scenarios.Schedule{Scenario: sc.Name, Seed: seed, Faults: faults}
		return OneWith(sc, seed, RunOptions{Faults: &schedule})
	}, options)
}

// shrink reduces the faults the first run drew, re-running with rerun.
func shrink(name string, seed uint64, first reports.Result, drawn scenarios.Chaos, rerun rerun, options ShrinkOptions) (Shrunk, error) {
	if options.MaxRuns <= 0 {
		options.MaxRuns = DefaultShrinkRuns
	}
	failure := FailureOf(first)
	original := scenarios.Schedule{Scenario: name, Seed: seed, Faults: drawn.Faults}
	if failure == "" {
		return Shrunk{Original: original, Runs: 1, Result: first}, fmt.Errorf("%s seed %d with chaos (%s): %w",
			name, seed, first.Verdict, ErrPasses)
	}
	s := &shrinker{rerun: rerun, name: name, seed: seed, options: options, failure: failure, runs: 1,
		points: drawn.Points, rng: rand.New(rand.NewPCG(seed, 0x5a7121c))}
	if !s.try("replay the drawn schedule", drawn.Faults) {
		return Shrunk{Original: original, Failure: failure, Runs: s.runs, Result: s.result}, fmt.Errorf(
			"%s seed %d: its drawn schedule of %d faults, replayed, does not fail as the chaos run did (%s)",
			name, seed, len(drawn.Faults), failure)
	}
	if !s.try("no fault at all", nil) {
		s.deleteRandomSubsets()
		for changed := true; changed && !s.exceeded; {
			s.deleteSingles()
			changed = s.shortenAndDelay()
		}
	}
	minimal := scenarios.Schedule{Scenario: name, Seed: seed, Faults: s.faults}
	if minimal.Faults == nil {
		minimal.Faults = []scenarios.Fault{}
	}
	return Shrunk{Original: original, Minimal: minimal, Failure: failure, Runs: s.runs, Exhausted: s.exceeded,
		Result: s.result}, nil
}

// try re-runs the seed with the faults and keeps them when the run fails the
// same way; what the run injected is what is kept.
func (s *shrinker) try(step string, faults []scenarios.Fault) bool {
	if s.runs >= s.options.MaxRuns {
		s.exceeded = true
		return false
	}
	s.runs++
	result, chaos := s.rerun(faults)
	if FailureOf(result) != s.failure {
		return false
	}
	s.faults, s.points, s.result = chaos.Faults, chaos.Points, result
	if s.options.Progress != nil {
		s.options.Progress(step, scenarios.Schedule{Scenario: s.name, Seed: s.seed, Faults: s.faults})
	}
	return true
}

// deleteRandomSubsets drops random subsets: each attempt at least one fault
// and every other with probability p; a round of attempts that keeps nothing
// halves p, until p deletes about one fault in a round.
func (s *shrinker) deleteRandomSubsets() {
	for p := 0.5; len(s.faults) > 1 && p > 0.5/float64(len(s.faults)) && !s.exceeded; p /= 2 {
		for attempt := 0; attempt < 2*len(s.faults) && len(s.faults) > 1 && !s.exceeded; attempt++ {
			if s.try(fmt.Sprintf("delete a random subset (p %.3f)", p), randomSubset(s.rng, s.faults, p)) {
				attempt = -1 // progress: a new round at the same p
			}
		}
	}
}

func randomSubset(rng *rand.Rand, faults []scenarios.Fault, p float64) []scenarios.Fault {
	always := rng.IntN(len(faults))
	var kept []scenarios.Fault
	for i, f := range faults {
		if i != always && rng.Float64() >= p {
			kept = append(kept, f)
		}
	}
	return kept
}

// deleteSingles drops one fault at a time until none can be dropped.
func (s *shrinker) deleteSingles() {
	for i := 0; i < len(s.faults) && !s.exceeded; {
		without := slices.Delete(slices.Clone(s.faults), i, i+1)
		if s.try(fmt.Sprintf("delete %s", s.faults[i]), without) {
			i = 0 // what was needed before may not be now
			continue
		}
		i++
	}
}

// shortenAndDelay makes each fault as short, then as late, as the failure
// allows, and says whether any changed.
func (s *shrinker) shortenAndDelay() (changed bool) {
	for i := 0; i < len(s.faults) && !s.exceeded; i++ {
		for s.faults[i].Duration/2 >= scenarios.Span(shortestFault) && !s.exceeded {
			shorter := slices.Clone(s.faults)
			shorter[i].Duration /= 2
			if !s.try(fmt.Sprintf("shorten %s", s.faults[i]), shorter) {
				break
			}
			changed = true
		}
		if i < len(s.faults) && s.delay(i) {
			changed = true
		}
	}
	return changed
}

// delay moves fault i to the latest chaos point after its own at which the
// run still fails the same way.
func (s *shrinker) delay(i int) bool {
	for point := len(s.points) - 1; point > s.faults[i].At && !s.exceeded; point-- {
		later := slices.Clone(s.faults)
		later[i].At, later[i].Phase = point, s.points[point]
		slices.SortStableFunc(later, func(a, b scenarios.Fault) int { return a.At - b.At })
		if s.try(fmt.Sprintf("move %s to point %d", s.faults[i], point), later) {
			return true
		}
	}
	return false
}
