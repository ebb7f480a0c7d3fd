package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/local"
	"github.com/baton-dr/baton/bed/real"
	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

func newScenarioCommand() *cobra.Command {
	scenario := &cobra.Command{
		Use:   "scenario",
		Short: "run DR scenarios on a chosen bed",
		Long: `scenario runs baton's scenarios on one of its beds: sim (the deterministic
simulation, as batonctl sim run), local (real kube-apiservers and etcds,
the real baton-controller, baton-node and baton-csi binaries on btrfs over
loop devices, each site in its own network namespace; needs root), or real
(the kind hub and sites make realbed brought up, baton deployed in them;
needs root).`,
	}
	scenario.AddCommand(newScenarioRunCommand(), newScenarioLackingCommand())
	return scenario
}

func newScenarioRunCommand() *cobra.Command {
	var (
		bedName, bin, dir, out string
		faultsFile             string
		seed                   uint64
		timeScale              float64
		quiet, chaos, together bool
	)
	run := &cobra.Command{
		Use:   "run SCENARIO... --bed sim|local",
		Short: "run scenarios, each on a bed of its own, and print what happened",
		Example: `  batonctl scenario run wordpress/relocate --bed local
  sudo go run ./cmd/batonctl scenario run wordpress/protect gitea/relocate --bed local --bin bin`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			var selected []scenarios.Scenario
			for _, name := range names {
				sc, err := scenarios.Find(name)
				if err != nil {
					return err
				}
				switch bedName {
				case "local":
					if err := localRuns(sc); err != nil {
						return err
					}
				case "real":
					if err := realRuns(sc); err != nil {
						return err
					}
				}
				selected = append(selected, sc)
			}
			if bedName != "sim" && bedName != "local" && bedName != "real" {
				return fmt.Errorf("--bed %q: want sim, local or real", bedName)
			}
			if together && bedName != "real" {
				return fmt.Errorf("--side-by-side is for --bed real: the %s bed runs one scenario at a time", bedName)
			}
			faults, err := readFaults(faultsFile, chaos, selected, bedName)
			if err != nil {
				return err
			}
			if faults.schedule != nil && !cmd.Flags().Changed("seed") {
				seed = faults.schedule.Seed
			}
			if bedName == "real" && !cmd.Flags().Changed("time-scale") {
				timeScale = real.DefaultTimeScale
			}
			progress := cmd.ErrOrStderr()
			if quiet {
				progress = io.Discard
			}
			started := time.Now()
			var results []reports.Result
			runOne := func(sc scenarios.Scenario, progress, w io.Writer) reports.Result {
				switch bedName {
				case "sim":
					result, _ := sweep.OneWith(sc, seed, sweep.RunOptions{Chaos: chaos, Faults: faults.schedule, FaultsFile: faults.file})
					return result
				case "real":
					return runReal(sc, real.Options{Seed: seed, TimeScale: timeScale, Log: progress}, faults, w)
				default:
					return runLocal(sc, local.Options{Binaries: bin, Dir: dir, Seed: seed, TimeScale: timeScale, Log: progress}, faults, w)
				}
			}
			if together {
				results = sideBySide(selected, progress, cmd.OutOrStdout(), runOne)
			} else {
				for _, sc := range selected {
					result := runOne(sc, progress, cmd.OutOrStdout())
					printResult(cmd.OutOrStdout(), result)
					results = append(results, result)
				}
			}
			run := reports.Run{Name: "scenario run", Bed: bedName, Started: started, Duration: time.Since(started), Results: results}
			if err := writeRunDir(cmd.OutOrStdout(), out, run); err != nil {
				return err
			}
			failed := 0
			for _, r := range results {
				if r.Verdict != reports.Passed {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d scenarios failed on the %s bed", failed, len(results), bedName)
			}
			return nil
		},
	}
	run.Flags().StringVar(&bedName, "bed", "sim", "the bed: sim, local or real (the kind sites make realbed brought up; root)")
	run.Flags().Uint64Var(&seed, "seed", 1, "seed of the workloads (and of the simulation)")
	run.Flags().StringVar(&bin, "bin", "", "local: directory holding baton-controller, baton-node and baton-csi; empty builds them with go build")
	run.Flags().StringVar(&dir, "dir", "", "local: directory for the bed's files and the processes' logs, kept afterwards; empty uses a temporary one")
	run.Flags().Float64Var(&timeScale, "time-scale", 60, "local and real: scenario seconds per wall-clock second (Run(3m) lasts 3 s at 60; the real bed's default is 10)")
	run.Flags().BoolVar(&chaos, "chaos", false, "inject faults at phase boundaries, chosen by the seed (on the local bed the faults it lacks fail the run)")
	run.Flags().StringVar(&faultsFile, "faults", "", "inject the faults of this schedule file (batonctl chaos shrink writes one) instead of drawing them; "+
		"one scenario; refused before the run when the bed cannot make one of its fault classes")
	run.Flags().BoolVar(&quiet, "quiet", false, "local: do not print the bed's progress on stderr")
	run.Flags().BoolVar(&together, "side-by-side", false, "real: run the scenarios at once, each on a bed of its own; they share the sites, "+
		"so a site one cuts off is cut off for all, and each line printed is prefixed with its scenario")
	run.Flags().StringVar(&out, "out", "", "write junit.xml, results.json and report.html into this directory")
	return run
}

// runLocal starts a local bed, runs the scenario on it and closes it; the
// bed's start-up and the scenario's wall time are printed.
func runLocal(sc scenarios.Scenario, options local.Options, faults runFaults, w io.Writer) reports.Result {
	replay := fmt.Sprintf("batonctl scenario run %s --bed local --seed %d %s", sc.Name, options.Seed, faults.flag())
	if options.Dir != "" {
		options.Dir = fmt.Sprintf("%s/%s-%d", options.Dir, sanitize(sc.Name), time.Now().Unix())
		if err := os.MkdirAll(options.Dir, 0o700); err != nil {
			return reports.Result{Scenario: sc.Name, Seed: options.Seed, Verdict: reports.Errored, Replay: replay, Error: err.Error()}
		}
	}
	// envtest logs through controller-runtime's logger; batonctl prints the
	// bed's own progress instead.
	ctrllog.SetLogger(logr.Discard())
	started := time.Now()
	b, err := local.New(options)
	if err != nil {
		return reports.Result{Scenario: sc.Name, Seed: options.Seed, Verdict: reports.Errored, Replay: replay, Error: err.Error()}
	}
	fmt.Fprintf(w, "%s: the local bed started in %s (%s)\n", sc.Name, time.Since(started).Round(time.Millisecond), b.Dir())
	return runThenClose(sc, b, faults.options(options.Seed, replay), w,
		"closing the local bed", "bed: clean teardown")
}

// closingBed is a bed batonctl brought up (local) or attached to (real), and
// so must close.
type closingBed interface {
	bed.Bed
	Close() error
}

// runThenClose runs the scenario on b and closes it. ^C or SIGTERM
// mid-scenario still closes the bed (closing says what that does): its
// namespaces, mounts, loop devices and partitions must not outlive batonctl.
// A close that fails fails the run, as the invariant closed. With seeded
// bugs switched on, a pass is a miss (reports.WithBugs).
func runThenClose(sc scenarios.Scenario, b closingBed, options scenarios.Options, w io.Writer, closing, closed string) reports.Result {
	on := bugs.Strings(bugs.Selected())
	options.Replay = bugs.Replay(on, options.Replay)
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	defer func() {
		signal.Stop(interrupted)
		close(interrupted)
	}()
	go func() {
		if _, ok := <-interrupted; ok {
			fmt.Fprintln(os.Stderr, "batonctl: interrupted;", closing)
			if err := b.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "batonctl:", err)
			}
			os.Exit(130)
		}
	}()
	ran := time.Now()
	result := sc.Run(b, options)
	if measured, ok := b.(interface{ Syncs() []reports.Sync }); ok {
		result.Syncs = measured.Syncs() // the beds that measure their shipments
	}
	fmt.Fprintf(w, "%s: ran in %s\n", sc.Name, time.Since(ran).Round(time.Millisecond))
	if err := b.Close(); err != nil {
		result.Verdict = reports.Failed
		result.Violations = append(result.Violations, reports.Violation{Invariant: closed, Message: err.Error(), At: time.Now()})
	}
	return reports.WithBugs(result, on)
}

func sanitize(name string) string {
	out := []rune(name)
	for i, r := range out {
		if r == '/' {
			out[i] = '-'
		}
	}
	return string(out)
}

func newScenarioLackingCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "lacking",
		Short: "say in one line which scenarios the local bed does not run yet, and why; exit 1 if any",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if lacking := localLacking(scenarios.Catalogue()); lacking != "" {
				return fmt.Errorf("not on the local bed yet: %s", lacking)
			}
			return nil
		},
	}
}

// runReal attaches to the running real bed, runs the scenario on it and
// detaches (the run's namespaces deleted, its partitions healed).
func runReal(sc scenarios.Scenario, options real.Options, faults runFaults, w io.Writer) reports.Result {
	replay := fmt.Sprintf("batonctl scenario run %s --bed real --seed %d %s", sc.Name, options.Seed, faults.flag())
	errored := func(err error) reports.Result {
		return reports.Result{Scenario: sc.Name, Seed: options.Seed, Verdict: reports.Errored, Replay: replay, Error: err.Error()}
	}
	in, err := openInfra(options.Log)
	if err != nil {
		return errored(err)
	}
	// The applications run as themselves (WordPress, Gitea) unless told to
	// run the block-device workload models instead.
	if os.Getenv("BATON_REALBED_MODELS") != "1" {
		if options.AppImages, err = real.ReadAppImages(in.Paths.AppImages()); err != nil {
			return errored(fmt.Errorf("%w (or BATON_REALBED_MODELS=1 runs the workload models on raw devices instead)", err))
		}
	}
	started := time.Now()
	b, err := real.New(in, options)
	if err != nil {
		return errored(err)
	}
	fmt.Fprintf(w, "%s: attached to the real bed in %s\n", sc.Name, time.Since(started).Round(time.Millisecond))
	return runThenClose(sc, b, faults.options(options.Seed, replay), w,
		"healing the real bed's partitions and deleting the run's namespaces", "bed: clean detach")
}

// runFaults are a run's faults: drawn by the seed (chaos), given by a
// schedule file, or none.
type runFaults struct {
	chaos    bool
	schedule *scenarios.Schedule
	file     string
}

// readFaults reads --faults, when given, and refuses what it cannot run: a
// schedule beside --chaos, of another scenario or of more than one, or one
// needing a fault class the bed cannot make (asked of the bed's type before
// any bed is made: bed.Can).
func readFaults(file string, chaos bool, selected []scenarios.Scenario, bedName string) (runFaults, error) {
	if file == "" {
		return runFaults{chaos: chaos}, nil
	}
	if chaos {
		return runFaults{}, fmt.Errorf("--faults and --chaos: a run's faults come from its schedule or from its seed, not both")
	}
	if len(selected) != 1 {
		return runFaults{}, fmt.Errorf("--faults %s: a schedule is one scenario's, and %d are named", file, len(selected))
	}
	schedule, err := scenarios.ReadSchedule(file)
	if err != nil {
		return runFaults{}, err
	}
	if schedule.Scenario != "" && schedule.Scenario != selected[0].Name {
		return runFaults{}, fmt.Errorf("--faults %s is a schedule of %s, not of %s", file, schedule.Scenario, selected[0].Name)
	}
	var kind bed.Bed = (*local.Bed)(nil)
	switch bedName {
	case "sim":
		kind = (*bedsim.World)(nil)
	case "real":
		kind = (*real.Bed)(nil)
	}
	if err := scenarios.CanMake(kind, schedule); err != nil {
		return runFaults{}, fmt.Errorf("--faults %s on the %s bed: %w", file, bedName, err)
	}
	return runFaults{schedule: &schedule, file: file}, nil
}

// flag is the replay command's flag for these faults.
func (f runFaults) flag() string {
	if f.schedule != nil {
		return "--faults " + f.file
	}
	return fmt.Sprintf("--chaos=%v", f.chaos)
}

func (f runFaults) options(seed uint64, replay string) scenarios.Options {
	return scenarios.Options{Seed: seed, Chaos: f.chaos, Faults: f.schedule, Replay: replay}
}
