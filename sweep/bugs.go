package sweep

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
)

// MatrixOptions shape a seeded-bug matrix.
type MatrixOptions struct {
	// Bed names the bed ("sim").
	Bed string
	// Bugs are the rows, each run with that bug alone switched on.
	Bugs      []bugs.Bug
	FirstSeed uint64
	Seeds     int
	// Lacks says why the bed does not tell a scenario; nil: it tells them
	// all (the simulation).
	Lacks func(scenarios.Scenario) error
	// Run runs the scenarios over the seeds with the bugs this process has
	// switched on; nil: the simulation (Run, every CPU).
	Run func(scs []scenarios.Scenario, firstSeed uint64, seeds int) []reports.Result
	// Progress is told each row (a bug, or "" for the runs without one)
	// before it runs.
	Progress func(bug string, scs []scenarios.Scenario)
}

// Matrix runs, for each bug, the scenarios that should catch it with that
// bug switched on, then the same scenarios with no bug, which must pass.
// The run's Matrix holds the rows, its Results the runs without a bug. A
// build that carries no bug, or a bug the catalogue lacks, is an error
// before anything runs.
func Matrix(ctx context.Context, options MatrixOptions) (reports.Run, error) {
	if options.Seeds < 1 {
		return reports.Run{}, fmt.Errorf("a matrix of %d seeds would run nothing", options.Seeds)
	}
	for _, b := range options.Bugs {
		restore, err := bugs.Switch(b.Name) // refused by a build that carries no bug
		if err != nil {
			return reports.Run{}, err
		}
		restore()
	}
	if options.Run == nil {
		options.Run = func(scs []scenarios.Scenario, first uint64, seeds int) []reports.Result {
			return Run(ctx, Options{Scenarios: scs, FirstSeed: first, Seeds: seeds}).Results
		}
	}
	started := time.Now()
	run := reports.Run{Name: "bugs matrix", Bed: options.Bed, Started: started}
	var baseline []scenarios.Scenario
	for _, b := range options.Bugs {
		row, runnable, err := matrixRow(b, options.Lacks)
		if err != nil {
			return reports.Run{}, err
		}
		if len(runnable) > 0 {
			if options.Progress != nil {
				options.Progress(string(b.Name), runnable)
			}
			row.Runs, err = runWith(options, b.Name, runnable)
			if err != nil {
				return reports.Run{}, err
			}
		}
		for _, sc := range runnable {
			if !slices.ContainsFunc(baseline, func(other scenarios.Scenario) bool { return other.Name == sc.Name }) {
				baseline = append(baseline, sc)
			}
		}
		run.Matrix = append(run.Matrix, row)
	}
	if len(baseline) > 0 {
		if options.Progress != nil {
			options.Progress("", baseline)
		}
		results, err := runWith(options, "", baseline)
		if err != nil {
			return reports.Run{}, err
		}
		run.Results = results
	}
	run.Duration = time.Since(started)
	return run, nil
}

// matrixRow is a bug's row before it ran, and the scenarios of it the bed
// tells.
func matrixRow(b bugs.Bug, lacks func(scenarios.Scenario) error) (reports.BugRow, []scenarios.Scenario, error) {
	row := reports.BugRow{Bug: string(b.Name), Does: b.Does, Seed: b.Seed, Scenarios: b.Scenarios}
	var runnable []scenarios.Scenario
	for _, name := range b.Scenarios {
		sc, err := scenarios.Find(name)
		if err != nil {
			return row, nil, fmt.Errorf("bug %s: %w", b.Name, err)
		}
		if lacks != nil {
			if err := lacks(sc); err != nil {
				row.Lacking = append(row.Lacking, err.Error())
				continue
			}
		}
		runnable = append(runnable, sc)
	}
	return row, runnable, nil
}

// runWith runs the scenarios with exactly that bug on (none: "").
func runWith(options MatrixOptions, bug bugs.Name, scs []scenarios.Scenario) ([]reports.Result, error) {
	var names []bugs.Name
	if bug != "" {
		names = append(names, bug)
	}
	restore, err := bugs.Switch(names...)
	if err != nil {
		return nil, err
	}
	defer restore()
	return options.Run(scs, options.FirstSeed, options.Seeds), nil
}
