package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

// newChaosCommand is the nightly hunt: every scenario over a seed range with
// every fault class at its phase boundaries, in parallel, within a wall-clock
// budget, resumable from its journal.
func newChaosCommand() *cobra.Command {
	var (
		names, seedRange, journal, out string
		duration                       time.Duration
		workers, stopAfter             int
	)
	cmd := &cobra.Command{
		Use:   "chaos --duration 8h --seeds 1-100000",
		Short: "hunt for invariant violations: many seeds x every fault class, within a time budget",
		Long: `chaos runs every scenario over a range of seeds with a fault injected, by the
seed's odds, at each of its phase boundaries, in parallel, until the seeds or
the time budget run out, or after the first --stop-after failures. Each
finished run is appended to the journal (--journal), so a stopped hunt resumes
where it stopped. The report lists every violation with its replay command.

The fault classes it covers:
` + faultClassList(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			selected, err := selectScenarios(names)
			if err != nil {
				return err
			}
			first, last, err := parseSeedRange(seedRange)
			if err != nil {
				return err
			}
			done, earlier, err := readJournal(journal)
			if err != nil {
				return err
			}
			appendTo, err := os.OpenFile(journal, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			defer appendTo.Close()
			encoder := json.NewEncoder(appendTo)
			ctx, cancel := context.WithTimeout(context.Background(), duration)
			defer cancel()
			progress := newProgress(cmd.ErrOrStderr())
			fmt.Fprintf(cmd.ErrOrStderr(), "chaos: %d scenarios, seeds %d-%d, %d done before, budget %s; fault classes:\n%s",
				len(selected), first, last, len(done), duration, faultClassList())
			run := sweep.Run(ctx, sweep.Options{Scenarios: selected, FirstSeed: first, Seeds: int(last - first + 1),
				Chaos: true, Workers: workers, StopAfter: stopAfter, SeedMajor: true, Progress: progress.update,
				Skip: func(scenario string, seed uint64) bool { return done[journalKey(scenario, seed)] },
				OnResult: func(r reports.Result) {
					compact := r
					compact.Timeline = nil // replays from its seed
					if err := encoder.Encode(compact); err != nil {
						fmt.Fprintln(cmd.ErrOrStderr(), "chaos: journal:", err)
					}
				}})
			progress.finish()
			run.Name = "chaos " + time.Now().UTC().Format("2006-01-02")
			run.Results = append(earlier, run.Results...)
			slices.SortFunc(run.Results, func(a, b reports.Result) int {
				return strings.Compare(journalKey(a.Scenario, a.Seed), journalKey(b.Scenario, b.Seed))
			})
			return summarise(cmd.OutOrStdout(), run, out)
		},
	}
	cmd.AddCommand(newChaosShrinkCommand())
	cmd.Flags().StringVar(&names, "scenarios", "all", "comma-separated scenarios, or all")
	cmd.Flags().StringVar(&seedRange, "seeds", "1-1000", "seed range FIRST-LAST")
	cmd.Flags().DurationVar(&duration, "duration", time.Hour, "wall-clock budget")
	cmd.Flags().IntVar(&workers, "workers", 0, "parallel runs (default: the number of CPUs)")
	cmd.Flags().IntVar(&stopAfter, "stop-after", 10, "stop after this many failures (0: never)")
	cmd.Flags().StringVar(&journal, "journal", "chaos.journal", "append-only record of finished runs; resumes a hunt")
	cmd.Flags().StringVar(&out, "out", "out/chaos", "write junit.xml, results.json and report.html into this directory")
	return cmd
}

func parseSeedRange(s string) (uint64, uint64, error) {
	a, b, found := strings.Cut(s, "-")
	first, err := strconv.ParseUint(a, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("--seeds %q: want FIRST-LAST", s)
	}
	last := first
	if found {
		if last, err = strconv.ParseUint(b, 10, 64); err != nil || last < first {
			return 0, 0, fmt.Errorf("--seeds %q: want FIRST-LAST with FIRST <= LAST", s)
		}
	}
	return first, last, nil
}

func journalKey(scenario string, seed uint64) string { return fmt.Sprintf("%s#%020d", scenario, seed) }

// readJournal reads the runs a hunt finished before. A missing journal is a
// fresh start; a torn last line (a hunt killed mid-write) is dropped.
func readJournal(path string) (map[string]bool, []reports.Result, error) {
	done := map[string]bool{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return done, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var results []reports.Result
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	for scanner.Scan() {
		var r reports.Result
		if err := json.Unmarshal(scanner.Bytes(), &r); err != nil {
			continue
		}
		done[journalKey(r.Scenario, r.Seed)] = true
		results = append(results, r)
	}
	return done, results, scanner.Err()
}

// faultClassList is the fault classes a chaos run injects, one a line.
func faultClassList() string {
	var b strings.Builder
	for _, class := range scenarios.FaultClasses {
		fmt.Fprintf(&b, "  - %s\n", class)
	}
	return b.String()
}
