// Package sweep runs scenarios over ranges of seeds on the simulation bed,
// in parallel, and gathers one reports.Run. Every run is its own world on its
// own goroutine; results come out sorted by scenario and seed whatever the
// number of workers, so two sweeps of the same seeds produce the same report.
package sweep

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	simworld "github.com/baton-dr/baton/sim"
)

// Options shape a sweep.
type Options struct {
	Scenarios []scenarios.Scenario
	FirstSeed uint64
	Seeds     int
	Chaos     bool
	Workers   int // default: the number of CPUs
	// StopAfter ends the sweep early after that many failures (0: never).
	StopAfter int
	// Progress is called after every run with the runs done, the total and
	// the failures so far (from the calling goroutine of that run, serialised).
	Progress func(done, total, failed int)
	// SeedMajor runs every scenario on a seed before the next seed (chaos
	// runs, whose budget may end them anywhere); otherwise each scenario's
	// seeds run in turn.
	SeedMajor bool
	// Skip leaves out runs done before (a resumed chaos run).
	Skip func(scenario string, seed uint64) bool
	// OnResult sees every result as it comes (serialised), e.g. to keep a
	// resumable journal.
	OnResult func(reports.Result)
}

// Replay is the command that replays one run exactly.
func Replay(scenario string, seed uint64, chaos bool) string {
	command := fmt.Sprintf("batonctl sim run --scenario %s --seed %d", scenario, seed)
	if chaos {
		command += " --chaos"
	}
	return command
}

// BedOptions are the simulation bed's options for a scenario on a seed: its
// needs decide where the sites keep their records and whether their storage
// is deployed from the start.
func BedOptions(sc scenarios.Scenario, seed uint64, world ...simworld.Option) bedsim.Options {
	options := bedsim.Options{Seed: seed, Scenario: sc.Name, World: world, Undeployed: sc.Needs.Undeployed, Claims: sc.Needs.Claims}
	if sc.Needs.Objects {
		options.Records = bedsim.CRDRecords
	}
	return options
}

// One runs one scenario on one seed; world options (a trace) go to the kernel.
// With seeded bugs switched on (internal/bugs) the result says so, its
// replay command switches them on again, and a pass is a miss
// (reports.WithBugs).
func One(sc scenarios.Scenario, seed uint64, chaos bool, world ...simworld.Option) reports.Result {
	result, _ := OneWith(sc, seed, RunOptions{Chaos: chaos, World: world})
	return result
}

// RunOptions shape one run of One's: its faults drawn by the seed (Chaos)
// or given (Faults, read from FaultsFile, which the replay command names).
type RunOptions struct {
	Chaos      bool
	Faults     *scenarios.Schedule
	FaultsFile string
	World      []simworld.Option
}

// OneWith is One with its faults drawn or given, and says what the run's
// chaos did: the faults it injected and the chaos points it passed.
func OneWith(sc scenarios.Scenario, seed uint64, options RunOptions) (reports.Result, scenarios.Chaos) {
	w, err := bedsim.New(BedOptions(sc, seed, options.World...))
	on := bugs.Strings(bugs.Selected())
	replay := Replay(sc.Name, seed, options.Chaos)
	if options.Faults != nil {
		replay = ReplayFaults(sc.Name, seed, options.FaultsFile)
	}
	replay = bugs.Replay(on, replay)
	if err != nil {
		return reports.Result{Scenario: sc.Name, Seed: seed, Verdict: reports.Errored, Replay: replay, Error: err.Error(), Bugs: on}, scenarios.Chaos{}
	}
	result, chaos := sc.RunChaos(w, scenarios.Options{Seed: seed, Chaos: options.Chaos, Faults: options.Faults, Replay: replay})
	result.EventLogHash = w.Sim.Hash()
	result.Syncs = w.Syncs()
	return reports.WithBugs(result, on), chaos
}

// ReplayFaults is the command that replays a run of a fault schedule's file
// exactly (on the simulation; another bed with --bed).
func ReplayFaults(scenario string, seed uint64, file string) string {
	if file == "" {
		file = "FILE"
	}
	return fmt.Sprintf("batonctl scenario run %s --bed sim --seed %d --faults %s", scenario, seed, file)
}

type job struct {
	scenario scenarios.Scenario
	seed     uint64
}

// Run sweeps the scenarios over the seeds.
func Run(ctx context.Context, options Options) reports.Run {
	workers := options.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	var jobs []job
	add := func(sc scenarios.Scenario, i int) {
		seed := options.FirstSeed + uint64(i)
		if options.Skip == nil || !options.Skip(sc.Name, seed) {
			jobs = append(jobs, job{scenario: sc, seed: seed})
		}
	}
	if options.SeedMajor {
		for i := 0; i < options.Seeds; i++ {
			for _, sc := range options.Scenarios {
				add(sc, i)
			}
		}
	} else {
		for _, sc := range options.Scenarios {
			for i := 0; i < options.Seeds; i++ {
				add(sc, i)
			}
		}
	}
	started := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queue := make(chan job)
	var mu sync.Mutex
	var results []reports.Result
	failed := 0
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				r := One(j.scenario, j.seed, options.Chaos)
				r.Timeline = trim(r)
				mu.Lock()
				results = append(results, r)
				if options.OnResult != nil {
					options.OnResult(r)
				}
				if r.Verdict != reports.Passed {
					failed++
					if options.StopAfter > 0 && failed >= options.StopAfter {
						cancel()
					}
				}
				if options.Progress != nil {
					options.Progress(len(results), len(jobs), failed)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case queue <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	slices.SortFunc(results, func(a, b reports.Result) int {
		if a.Scenario != b.Scenario {
			if a.Scenario < b.Scenario {
				return -1
			}
			return 1
		}
		return int(a.Seed) - int(b.Seed)
	})
	retrace(results, options)
	return reports.Run{Name: "sim sweep", Bed: "sim", Started: started, Duration: time.Since(started), Results: results}
}

// retrace runs the passed results the report samples (reports.Samples) once
// more to restore the timelines trim dropped: a sampled result is drawn with
// its site and hub lanes, as a single run's report is. A replay whose event
// log differs from the first run's is a determinism bug, and errs.
func retrace(results []reports.Result, options Options) {
	byName := map[string]scenarios.Scenario{}
	for _, sc := range options.Scenarios {
		byName[sc.Name] = sc
	}
	for _, i := range reports.Samples(results) {
		r := &results[i]
		sc, found := byName[r.Scenario]
		if len(r.Timeline) > 0 || !found {
			continue
		}
		again := One(sc, r.Seed, options.Chaos)
		if again.EventLogHash != r.EventLogHash || again.Verdict != r.Verdict {
			r.Verdict = reports.Errored
			r.Error = fmt.Sprintf("the replay for the report diverged: event log %s (%s), first run %s (%s)",
				again.EventLogHash, again.Verdict, r.EventLogHash, r.Verdict)
			continue
		}
		r.Timeline = again.Timeline
	}
}

// trim keeps the timeline of failed runs only: a passed run replays from its
// seed, and a thousand timelines would make the report heavy; retrace
// restores the sampled ones.
func trim(r reports.Result) []reports.Event {
	if r.Verdict == reports.Passed {
		return nil
	}
	return r.Timeline
}
