package scenarios

import (
	"fmt"
	"math/rand/v2"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
)

// Options shape one run of a scenario.
type Options struct {
	Seed  uint64
	Chaos bool // partitions at phase boundaries
	// Replay is the command that replays this run, printed with failures.
	Replay string
	// Faults, when set, are the run's faults: it injects them at their
	// chaos points and draws none, Chaos or not.
	Faults *Schedule
}

// Chaos is what a run's chaos did: the faults it injected, drawn or
// scheduled, and the names of the chaos points it passed (a fault's At
// indexes them).
type Chaos struct {
	Faults []Fault
	Points []string
}

// Run tells the scenario on a bed and returns its result. The bed is the
// caller's to create (from the same seed) and to close.
func (sc Scenario) Run(b bed.Bed, options Options) reports.Result {
	result, _ := sc.RunChaos(b, options)
	return result
}

// RunChaos is Run that also says what its chaos did.
func (sc Scenario) RunChaos(b bed.Bed, options Options) (reports.Result, Chaos) {
	result := reports.Result{Scenario: sc.Name, Seed: options.Seed, Replay: options.Replay, Started: b.Now()}
	app := bed.App{Name: string(sc.Kind), Kind: sc.Kind, Site: b.Sites()[0]}
	s := &Script{Bed: b, App: app, Chaos: options.Chaos, schedule: options.Faults, result: &result,
		rng: rand.New(rand.NewPCG(options.Seed, 0x5ce7a410)), pace: rand.New(rand.NewPCG(options.Seed, 0x9ace7))}
	err := sc.run(s)
	result.Duration = b.Now().Sub(result.Started)
	if shared, ok := b.(bed.SharedSites); ok {
		result.HeldBeside = shared.HeldBeside()
	}
	result.Violations = b.Violations()
	result.Timeline = b.Timeline()
	if keeper, ok := b.(bed.TailKeeper); ok {
		result.KeptTails = keeper.KeptTails()
	}
	if chains, chainErr := b.Chains(); chainErr == nil {
		result.Chains = chains
	}
	switch {
	case err == nil && len(result.Violations) == 0:
		result.Verdict = reports.Passed
	default:
		result.Verdict = reports.Failed
		if err != nil {
			result.Error = err.Error()
			result.Violations = append(result.Violations, reports.Violation{Invariant: "scenario",
				Message: fmt.Sprintf("%v", err), At: b.Now()})
		}
	}
	return result, Chaos{Faults: s.injected, Points: s.points}
}
