package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

// newChaosShrinkCommand reduces a failing chaos seed's fault schedule to the
// faults its failure needs (sweep.Shrink) and writes it for --faults.
func newChaosShrinkCommand() *cobra.Command {
	var (
		name, bedName, out string
		seed               uint64
		maxRuns            int
		verbose            bool
	)
	cmd := &cobra.Command{
		Use:   "shrink --scenario S --seed N",
		Short: "reduce a failing chaos run's fault schedule to the faults its failure needs",
		Long: `shrink takes the faults a chaos run of the scenario on the seed drew, and
reduces them on the simulation: it deletes random subsets of them (halving the
share deleted when no smaller schedule fails), then single faults, then makes
each survivor as short and as late as it can be, re-running until no fault can
be dropped. Every re-run is the same seed with a given schedule, so a shrink is
deterministic. A schedule "still fails" when its run fails the same way: the
same invariant the bed's checkers reported first or, when none did, the same
step whose error ended the run.

It prints the minimal schedule and the command that replays it, and writes it
(--out) as a file batonctl scenario run --faults accepts. A seed whose chaos run
passes has nothing to shrink: that is an error.`,
		Example: `  batonctl chaos shrink --scenario wordpress/failover --seed 7
  BATON_BUG=demote-end batonctl chaos shrink --scenario gitea/failover --seed 2 --out demote.faults.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if bedName != "sim" {
				return fmt.Errorf("--bed %q: a shrink re-runs on the simulation (sim); replay its schedule on another bed "+
					"with batonctl scenario run --bed %s --faults FILE", bedName, bedName)
			}
			sc, err := scenarios.Find(name)
			if err != nil {
				return err
			}
			if out == "" {
				out = fmt.Sprintf("%s-%d.faults.json", sanitize(sc.Name), seed)
			}
			options := sweep.ShrinkOptions{MaxRuns: maxRuns}
			if verbose {
				options.Progress = func(step string, kept scenarios.Schedule) {
					fmt.Fprintf(cmd.ErrOrStderr(), "shrink: %s: %d faults still fail\n", step, len(kept.Faults))
				}
			}
			started := time.Now()
			shrunk, err := sweep.Shrink(sc, seed, options)
			if errors.Is(err, sweep.ErrPasses) {
				return fmt.Errorf("%w; pick a failing seed (batonctl chaos lists them)", err)
			}
			if err != nil {
				return err
			}
			if err := scenarios.WriteSchedule(out, shrunk.Minimal); err != nil {
				return err
			}
			printShrunk(cmd.OutOrStdout(), shrunk, out, time.Since(started))
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "scenario", "", "the failing run's scenario")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "the failing run's seed (of a chaos run)")
	cmd.Flags().StringVar(&bedName, "bed", "sim", "the bed the shrink re-runs on: sim")
	cmd.Flags().StringVar(&out, "out", "", "write the minimal schedule to this file (default SCENARIO-SEED.faults.json)")
	cmd.Flags().IntVar(&maxRuns, "max-runs", sweep.DefaultShrinkRuns, "stop after this many re-runs with the smallest schedule found")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "print every smaller schedule found on stderr")
	cmd.MarkFlagRequired("scenario")
	cmd.MarkFlagRequired("seed")
	return cmd
}

func printShrunk(w io.Writer, shrunk sweep.Shrunk, file string, took time.Duration) {
	fmt.Fprintf(w, "%s seed %d fails (%s) with %d faults drawn; it needs %d of them (%d runs, %s):\n",
		shrunk.Original.Scenario, shrunk.Original.Seed, shrunk.Failure, len(shrunk.Original.Faults),
		len(shrunk.Minimal.Faults), shrunk.Runs, took.Round(time.Millisecond))
	for _, f := range shrunk.Minimal.Faults {
		fmt.Fprintf(w, "  %s\n", f)
	}
	if len(shrunk.Minimal.Faults) == 0 {
		fmt.Fprintln(w, "  (none: the failure needs no fault)")
	}
	if shrunk.Exhausted {
		fmt.Fprintln(w, "  (--max-runs ended the shrink: a fault may still be droppable)")
	}
	fmt.Fprintf(w, "written to %s; replay:\n  %s\n", file,
		bugs.Replay(bugs.Strings(bugs.Selected()), sweep.ReplayFaults(shrunk.Minimal.Scenario, shrunk.Minimal.Seed, file)))
}
