package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dr/baton/bed/local"
	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

func newBugsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "bugs",
		Short: "the seeded bugs: list them, and show that the beds catch each",
		Long: `bugs lists the bugs the seed documents report, each re-introduced behind
one switch: the build tag baton_bugs compiles them in (a default build
carries none), and BATON_BUG=NAME[,NAME] switches them on in a process
and in the binaries a bed starts. bugs matrix runs, for each bug, the
scenarios that should catch it with that bug on, and the same scenarios
with none.`,
	}
	c.AddCommand(newBugsListCommand(), newBugsMatrixCommand())
	return c
}

func newBugsListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "list the seeded bugs with the seed sentence each comes from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printBugs(cmd.OutOrStdout())
			return nil
		},
	}
}

func printBugs(w io.Writer) {
	if bugs.Carried {
		fmt.Fprintf(w, "this batonctl carries the seeded bugs (-tags %s); %s=NAME switches one on\n\n", bugs.Tag, bugs.Env)
	} else {
		fmt.Fprintf(w, "this batonctl carries none of them: build it with -tags %s to switch one on\n\n", bugs.Tag)
	}
	for _, b := range bugs.Catalogue() {
		fmt.Fprintf(w, "%s (%s): %s\n", b.Name, b.Rule, b.Does)
		fmt.Fprintf(w, "  seed:    %s\n", b.Seed)
		fmt.Fprintf(w, "           \"%s\"\n", b.Sentence)
		fmt.Fprintf(w, "  where:   %s\n", b.Where)
		fmt.Fprintf(w, "  caught:  %s\n", strings.Join(b.Scenarios, " "))
	}
}

func newBugsMatrixCommand() *cobra.Command {
	var (
		bedName, names, out, bin, dir string
		seeds                         int
		firstSeed                     uint64
		timeScale                     float64
	)
	c := &cobra.Command{
		Use:   "matrix --bed sim|local [--bugs NAME,...]",
		Short: "run each bug's scenarios with it on, and again with no bug; exit 1 unless every bug is caught",
		Example: `  go build -tags baton_bugs -o bin/batonctl-bugs ./cmd/batonctl
  bin/batonctl-bugs bugs matrix --bed sim --out out/bugs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			options := sweep.MatrixOptions{Bed: bedName, FirstSeed: firstSeed, Seeds: seeds,
				Progress: func(bug string, scs []scenarios.Scenario) { matrixProgress(cmd.ErrOrStderr(), bug, scs, seeds) }}
			switch bedName {
			case "sim":
			case "local":
				options.Lacks = localRuns
				options.Run = localMatrixRuns(local.Options{Binaries: bin, Dir: dir, TimeScale: timeScale, Log: io.Discard},
					cmd.ErrOrStderr())
			case "real":
				return fmt.Errorf("--bed real: not yet: the real bed's pods take no %s (deploy/chart sets none), so no bug "+
					"could be switched on there", bugs.Env)
			default:
				return fmt.Errorf("--bed %q: want sim or local", bedName)
			}
			selected, explicit, err := matrixBugs(names)
			if err != nil {
				return err
			}
			options.Bugs = selected
			if explicit {
				if err := refuseLacking(selected, options.Lacks, bedName); err != nil {
					return err
				}
			}
			run, err := sweep.Matrix(context.Background(), options)
			if err != nil {
				return err
			}
			printMatrix(cmd.OutOrStdout(), run)
			if err := writeRunDir(cmd.OutOrStdout(), out, run); err != nil {
				return err
			}
			return matrixVerdict(run)
		},
	}
	c.Flags().StringVar(&bedName, "bed", "sim", "the bed: sim, or local (root; its binaries built with -tags "+bugs.Tag+")")
	c.Flags().StringVar(&names, "bugs", "", "comma-separated bugs (batonctl bugs list); empty: every bug")
	c.Flags().IntVar(&seeds, "seeds", 2, "seeds per scenario")
	c.Flags().Uint64Var(&firstSeed, "first-seed", 1, "the first seed")
	c.Flags().StringVar(&out, "out", "", "write junit.xml, results.json and report.html (with the matrix) into this directory")
	c.Flags().StringVar(&bin, "bin", "", "local: directory holding baton-controller, baton-node and baton-csi built with -tags "+
		bugs.Tag+"; empty builds them")
	c.Flags().StringVar(&dir, "dir", "", "local: directory for the beds' files and logs, kept afterwards")
	c.Flags().Float64Var(&timeScale, "time-scale", 60, "local: scenario seconds per wall-clock second")
	return c
}

// matrixBugs are the bugs --bugs names, or every bug; explicit says the
// user named them. A build without the tag refuses any.
func matrixBugs(names string) (selected []bugs.Bug, explicit bool, err error) {
	if strings.TrimSpace(names) == "" {
		selected = bugs.Catalogue()
	} else {
		parsed, err := bugs.Parse(names)
		if err != nil {
			return nil, false, err
		}
		for _, name := range parsed {
			b, _ := bugs.Find(string(name))
			selected = append(selected, b)
		}
		explicit = true
	}
	if len(selected) == 0 {
		return nil, false, fmt.Errorf("--bugs %q names no bug", names)
	}
	if !bugs.Carried {
		return nil, false, fmt.Errorf("bug %s: this batonctl was built without -tags %s and carries no seeded bug "+
			"(go build -tags %s ./cmd/batonctl)", selected[0].Name, bugs.Tag, bugs.Tag)
	}
	return selected, explicit, nil
}

// refuseLacking refuses a bug the user named whose stories the bed tells
// none of, naming the stories and why.
func refuseLacking(selected []bugs.Bug, lacks func(scenarios.Scenario) error, bed string) error {
	if lacks == nil {
		return nil
	}
	for _, b := range selected {
		var why []string
		for _, name := range b.Scenarios {
			sc, err := scenarios.Find(name)
			if err != nil {
				return err
			}
			if err := lacks(sc); err != nil {
				why = append(why, err.Error())
			}
		}
		if len(why) == len(b.Scenarios) {
			return fmt.Errorf("bug %s: the %s bed tells none of its stories: %s", b.Name, bed, strings.Join(why, "; "))
		}
	}
	return nil
}

// localMatrixRuns runs scenarios on local beds one after the other, each
// on a bed of its own whose binaries inherit the bugs switched on here.
func localMatrixRuns(options local.Options, progress io.Writer) func([]scenarios.Scenario, uint64, int) []reports.Result {
	return func(scs []scenarios.Scenario, first uint64, seeds int) []reports.Result {
		selection := strings.Join(bugs.Strings(bugs.Selected()), ",")
		previous, had := os.LookupEnv(bugs.Env)
		os.Setenv(bugs.Env, selection)
		defer func() {
			if had {
				os.Setenv(bugs.Env, previous)
			} else {
				os.Unsetenv(bugs.Env)
			}
		}()
		var results []reports.Result
		for _, sc := range scs {
			for i := range seeds {
				options.Seed = first + uint64(i)
				results = append(results, runLocal(sc, options, runFaults{}, progress))
			}
		}
		return results
	}
}

func matrixProgress(w io.Writer, bug string, scs []scenarios.Scenario, seeds int) {
	var names []string
	for _, sc := range scs {
		names = append(names, sc.Name)
	}
	what := "bug " + bug + " on"
	if bug == "" {
		what = "no bug"
	}
	fmt.Fprintf(w, "%s: %s x %d seeds\n", what, strings.Join(names, " "), seeds)
}

// printMatrix prints a row per bug, then the runs without a bug.
func printMatrix(w io.Writer, run reports.Run) {
	fmt.Fprintf(w, "%-22s %-8s %-26s %-10s %-6s %s\n", "bug", "verdict", "caught by", "after", "runs", "check")
	for _, row := range run.Matrix {
		verdict := row.Verdict()
		caughtBy, after, check := "-", "-", ""
		switch verdict {
		case reports.BugCaught:
			r, _ := row.CaughtBy()
			var message string
			var at time.Duration
			check, message, at = r.Catch()
			caughtBy, after, check = fmt.Sprintf("%s seed %d", r.Scenario, r.Seed), at.Round(time.Second).String(),
				check+": "+firstLine(message)
		case reports.BugNotRun:
			check = strings.Join(row.Lacking, "; ")
		default:
			check = "missed by " + strings.Join(row.Scenarios, ", ")
		}
		fmt.Fprintf(w, "%-22s %-8s %-26s %-10s %-6s %s\n", row.Bug, verdict, caughtBy, after,
			fmt.Sprintf("%d/%d", row.CaughtRuns(), len(row.Runs)), check)
	}
	passed := 0
	for _, r := range run.Results {
		if r.Verdict == reports.Passed {
			passed++
		}
	}
	fmt.Fprintf(w, "no bug: %d of %d runs passed\n", passed, len(run.Results))
	for _, r := range run.Results {
		if r.Verdict != reports.Passed {
			fmt.Fprintf(w, "  %s seed %d %s: %s\n  replay: %s\n", r.Scenario, r.Seed, strings.ToUpper(string(r.Verdict)),
				firstLine(failureReason(r)), r.Replay)
		}
	}
	t := reports.CountBugs(run.Matrix)
	fmt.Fprintf(w, "%d bugs: %d caught, %d missed, %d errored, %d not run on the %s bed; took %s\n", t.Bugs, t.Caught, t.Missed,
		t.Errored, t.NotRun, run.Bed, run.Duration.Round(time.Second))
}

// matrixVerdict fails the command when a bug was missed or a bed errored,
// or when a run without a bug failed.
func matrixVerdict(run reports.Run) error {
	t := reports.CountBugs(run.Matrix)
	failed := 0
	for _, r := range run.Results {
		if r.Verdict != reports.Passed {
			failed++
		}
	}
	if t.Missed+t.Errored > 0 || failed > 0 {
		return fmt.Errorf("%d bugs missed, %d errored, %d of %d runs without a bug failed", t.Missed, t.Errored, failed, len(run.Results))
	}
	return nil
}
