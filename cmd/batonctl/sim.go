package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	simworld "github.com/baton-dr/baton/sim"
	"github.com/baton-dr/baton/sweep"
)

func newSimCommand() *cobra.Command {
	sim := &cobra.Command{
		Use:   "sim",
		Short: "run DR scenarios on the deterministic simulation bed",
		Long: `sim runs baton's scenarios -- WordPress and Gitea protected, relocated,
failed over under partitions and back -- on the simulation bed: the real
control planes, node agents and CSI driver over simulated ZFS, DRBD and
network, in simulated time. A seed replays a run byte for byte.`,
	}
	sim.AddCommand(newSimListCommand(), newSimRunCommand(), newSimSweepCommand())
	return sim
}

func newSimListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "list the scenarios",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, sc := range scenarios.Catalogue() {
				fmt.Fprintf(cmd.OutOrStdout(), "%-22s %s\n", sc.Name, sc.Story)
			}
			return nil
		},
	}
}

func newSimRunCommand() *cobra.Command {
	var (
		name, trace, out string
		seed             uint64
		chaos            bool
	)
	run := &cobra.Command{
		Use:   "run --scenario NAME --seed N",
		Short: "run one scenario on one seed and show what happened",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := scenarios.Find(name)
			if err != nil {
				return err
			}
			var world []simworld.Option
			if trace != "" {
				f, err := os.Create(trace)
				if err != nil {
					return err
				}
				defer f.Close()
				world = append(world, simworld.WithTrace(f))
			}
			started := time.Now()
			result := sweep.One(sc, seed, chaos, world...)
			printResult(cmd.OutOrStdout(), result)
			fmt.Fprintf(cmd.OutOrStdout(), "%s simulated in %s\n", result.Duration, time.Since(started).Round(time.Millisecond))
			run := reports.Run{Name: "sim run", Bed: "sim", Started: started, Duration: time.Since(started),
				Results: []reports.Result{result}}
			if err := writeRunDir(cmd.OutOrStdout(), out, run); err != nil {
				return err
			}
			if result.Verdict != reports.Passed {
				return fmt.Errorf("%s seed %d %s", name, seed, result.Verdict)
			}
			return nil
		},
	}
	run.Flags().StringVar(&name, "scenario", "", "scenario to run (batonctl sim list)")
	run.Flags().Uint64Var(&seed, "seed", 1, "seed of the run")
	run.Flags().BoolVar(&chaos, "chaos", false, "inject faults at phase boundaries (batonctl chaos --help lists them)")
	run.Flags().StringVar(&trace, "trace", "", "write the event log to this file")
	run.Flags().StringVar(&out, "out", "", "write junit.xml, results.json and report.html into this directory")
	run.MarkFlagRequired("scenario")
	return run
}

func printResult(w io.Writer, r reports.Result) {
	log := "event log " + shortHash(r.EventLogHash)
	if r.EventLogHash == "" {
		log = "no event log hash: only the simulation replays a run exactly"
	}
	fmt.Fprintf(w, "%s seed %d: %s (%s)\n", r.Scenario, r.Seed, strings.ToUpper(string(r.Verdict)), log)
	for _, p := range r.Phases {
		mark := "ok  "
		if !p.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %8s  %s", mark, p.End.Sub(p.Start).Round(time.Second), p.Name)
		if p.Note != "" {
			fmt.Fprintf(w, ": %s", firstLine(p.Note))
		}
		fmt.Fprintln(w)
	}
	if r.HeldBeside > 0 {
		fmt.Fprintf(w, "  held %s by the faults of the runs beside it (not counted against its waits)\n", r.HeldBeside.Round(time.Second))
	}
	for _, f := range r.Failovers {
		kind := "unplanned"
		if f.Planned {
			kind = "planned"
		}
		fmt.Fprintf(w, "  %s move of %s/%s %s->%s: lost %d acknowledged writes, RPO %s, RTO %s", kind, f.App, f.Volume, f.From, f.To,
			f.LostWrites, f.RPO.Round(time.Millisecond), f.RTO.Round(time.Millisecond))
		if f.LostWrites > 0 {
			fmt.Fprintf(w, " (loss age %s", f.LossAge.Round(time.Millisecond))
			if f.RPOBound > 0 {
				fmt.Fprintf(w, "; the RPO bound allows %s", f.RPOBound)
			}
			fmt.Fprint(w, ")")
		}
		fmt.Fprintln(w)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  violation (%s): %s\n", v.Invariant, firstLine(v.Message))
	}
	if r.Verdict != reports.Passed {
		fmt.Fprintf(w, "  replay: %s\n", r.Replay)
	}
}

func newSimSweepCommand() *cobra.Command {
	var (
		names          string
		seeds, workers int
		firstSeed      uint64
		chaos          bool
		out            string
		stopAfter      int
	)
	cmd := &cobra.Command{
		Use:   "sweep --scenarios all --seeds N",
		Short: "run scenarios over many seeds; print failures with their replay commands",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := wantSeeds("--seeds", seeds); err != nil {
				return err
			}
			selected, err := selectScenarios(names)
			if err != nil {
				return err
			}
			progress := newProgress(cmd.ErrOrStderr())
			run := sweep.Run(context.Background(), sweep.Options{Scenarios: selected, FirstSeed: firstSeed, Seeds: seeds,
				Chaos: chaos, Workers: workers, StopAfter: stopAfter, Progress: progress.update})
			progress.finish()
			return summarise(cmd.OutOrStdout(), run, out)
		},
	}
	cmd.Flags().StringVar(&names, "scenarios", "all", "comma-separated scenarios, or all")
	cmd.Flags().IntVar(&seeds, "seeds", 100, "seeds per scenario")
	cmd.Flags().Uint64Var(&firstSeed, "first-seed", 1, "the first seed")
	cmd.Flags().BoolVar(&chaos, "chaos", false, "inject faults at phase boundaries (batonctl chaos --help lists them)")
	cmd.Flags().IntVar(&workers, "workers", 0, "parallel runs (default: the number of CPUs)")
	cmd.Flags().IntVar(&stopAfter, "stop-after", 0, "stop after this many failures (0: never)")
	cmd.Flags().StringVar(&out, "out", "", "write junit.xml, results.json and report.html into this directory")
	return cmd
}

// wantSeeds refuses a sweep of no seeds: it would run nothing and pass.
func wantSeeds(what string, seeds int) error {
	if seeds < 1 {
		return fmt.Errorf("%s %d: a sweep needs at least 1 seed per scenario (it would run nothing and pass)", what, seeds)
	}
	return nil
}

func selectScenarios(names string) ([]scenarios.Scenario, error) {
	if names == "all" || names == "" {
		return scenarios.Catalogue(), nil
	}
	var out []scenarios.Scenario
	for _, name := range strings.Split(names, ",") {
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("scenarios %q: an empty name", names)
		}
		sc, err := scenarios.Find(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// summarise prints the sweep's verdicts and failures and writes its report.
func summarise(w io.Writer, run reports.Run, out string) error {
	perScenario := map[string][2]int{}
	var order []string
	var failures []reports.Result
	var simulated time.Duration
	for _, r := range run.Results {
		counts, seen := perScenario[r.Scenario]
		if !seen {
			order = append(order, r.Scenario)
		}
		if r.Verdict == reports.Passed {
			counts[0]++
		} else {
			counts[1]++
			failures = append(failures, r)
		}
		perScenario[r.Scenario] = counts
		simulated += r.Duration
	}
	for _, name := range order {
		c := perScenario[name]
		fmt.Fprintf(w, "%-22s %5d passed %5d failed\n", name, c[0], c[1])
	}
	if len(run.Results) == 0 {
		return fmt.Errorf("%s ran no run: nothing was tested", run.Name)
	}
	rate := float64(len(run.Results)) / run.Duration.Minutes()
	fmt.Fprintf(w, "%d runs in %s: %.0f seeds/min, %s simulated (%.0fx real time)\n", len(run.Results),
		run.Duration.Round(time.Second), rate, simulated.Round(time.Minute), simulated.Seconds()/run.Duration.Seconds())
	for _, f := range failures {
		fmt.Fprintf(w, "FAILED %s seed %d: %s\n  replay: %s\n", f.Scenario, f.Seed, firstLine(failureReason(f)), f.Replay)
	}
	if err := writeRunDir(w, out, run); err != nil {
		return err
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d of %d runs failed", len(failures), len(run.Results))
	}
	return nil
}

func failureReason(r reports.Result) string {
	if len(r.Violations) > 0 {
		return r.Violations[0].Message
	}
	return r.Error
}

// progress draws a bar with rate and ETA on a terminal, and a line per tenth
// of the work elsewhere.
type progress struct {
	w        io.Writer
	terminal bool
	started  time.Time
	last     int
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, started: time.Now()}
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

func (p *progress) update(done, total, failed int) {
	elapsed := time.Since(p.started)
	rate := float64(done) / elapsed.Seconds()
	eta := time.Duration(float64(total-done) / max(rate, 1e-9) * float64(time.Second))
	const width = 30
	bar := strings.Repeat("=", done*width/total) + strings.Repeat(" ", width-done*width/total)
	line := fmt.Sprintf("[%s] %d/%d %.1f/s ETA %s failures %d", bar, done, total, rate, eta.Round(time.Second), failed)
	switch {
	case p.terminal:
		fmt.Fprintf(p.w, "\r%s", line)
	case done*10/total > p.last*10/total || done == total:
		fmt.Fprintln(p.w, line)
	}
	p.last = done
}

func (p *progress) finish() {
	if p.terminal {
		fmt.Fprintln(p.w)
	}
}

// writeRunDir writes the run's reports into out, stamped with the commit
// batonctl was built from, and tells w where report.html is; an empty out
// asks for none.
func writeRunDir(w io.Writer, out string, run reports.Run) error {
	if out == "" {
		return nil
	}
	run.Commit = revision()
	if err := reports.WriteRunDir(out, run); err != nil {
		return err
	}
	fmt.Fprintf(w, "report: %s/report.html\n", out)
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
