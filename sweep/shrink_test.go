package sweep

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
)

// needsLateLongCrashAndPartition is a failure only some schedules reach: a
// node crash of at least 20 s at or after point 3, and a partition anywhere.
// Its runs reach every one of twelve points.
func needsLateLongCrashAndPartition(calls *int) rerun {
	points := make([]string, 12)
	for i := range points {
		points[i] = fmt.Sprintf("start of phase %d", i)
	}
	return func(faults []scenarios.Fault) (reports.Result, scenarios.Chaos) {
		*calls++
		crash := slices.ContainsFunc(faults, func(f scenarios.Fault) bool {
			return f.Kind == scenarios.FaultNodeCrash && f.At >= 3 && time.Duration(f.Duration) >= 20*time.Second
		})
		partition := slices.ContainsFunc(faults, func(f scenarios.Fault) bool { return f.Kind == scenarios.FaultPartition })
		result := reports.Result{Verdict: reports.Passed}
		if crash && partition {
			result = reports.Result{Verdict: reports.Failed, Violations: []reports.Violation{{Invariant: "chain: live ends"}}}
		} else if crash {
			// failing another way is not failing the same way
			result = reports.Result{Verdict: reports.Failed, Violations: []reports.Violation{{Invariant: "chain: forks"}}}
		}
		return result, scenarios.Chaos{Faults: slices.Clone(faults), Points: points}
	}
}

func drawnEight() []scenarios.Fault {
	kinds := []scenarios.FaultKind{scenarios.FaultAPIErrors, scenarios.FaultPartition, scenarios.FaultStoreFaults,
		scenarios.FaultDiskFull, scenarios.FaultNodeCrash, scenarios.FaultOperatorCrash, scenarios.FaultPartition,
		scenarios.FaultDegradedLink}
	var faults []scenarios.Fault
	for i, kind := range kinds {
		faults = append(faults, scenarios.Fault{At: i, Kind: kind, Target: "site-a", Duration: scenarios.Span(100 * time.Second)})
	}
	return faults
}

// The shrink keeps exactly the faults the failure needs, each as short and as
// late as it still fails (a crash of 25 s: 12.5 s is too short; both at the
// last point), never keeps a schedule that fails another way, and does the
// same in the same re-runs when asked again.
func TestShrinkKeepsOnlyWhatTheFailureNeedsAsShortAndLateAsItCanBe(t *testing.T) {
	var shrunk [2]Shrunk
	var calls [2]int
	for i := range shrunk {
		rerun := needsLateLongCrashAndPartition(&calls[i])
		first, drawn := rerun(drawnEight())
		var err error
		shrunk[i], err = shrink("story", 7, first, drawn, rerun, ShrinkOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	got := shrunk[0]
	if got.Failure != "invariant: chain: live ends" || len(got.Original.Faults) != 8 {
		t.Fatalf("failure %q from %d faults, want the live ends of 8", got.Failure, len(got.Original.Faults))
	}
	if len(got.Minimal.Faults) != 2 {
		t.Fatalf("minimal schedule %v, want the crash and one partition", got.Minimal.Faults)
	}
	for _, f := range got.Minimal.Faults {
		if f.At != 11 || f.Phase != "start of phase 11" {
			t.Errorf("%s, want it moved to the last point, 11", f)
		}
		if f.Kind == scenarios.FaultNodeCrash && time.Duration(f.Duration) != 25*time.Second {
			t.Errorf("%s, want the crash shortened to 25s", f)
		}
		if f.Kind == scenarios.FaultPartition && time.Duration(f.Duration) >= 2*time.Second {
			t.Errorf("%s, want the partition, whose length does not matter, as short as 1-2s", f)
		}
	}
	if got.Exhausted || got.Runs != calls[0] {
		t.Errorf("%d runs counted, %d made, exhausted %v", got.Runs, calls[0], got.Exhausted)
	}
	if !slices.Equal(got.Minimal.Faults, shrunk[1].Minimal.Faults) || got.Runs != shrunk[1].Runs {
		t.Errorf("a second shrink gave %v in %d runs, the first %v in %d", shrunk[1].Minimal.Faults, shrunk[1].Runs,
			got.Minimal.Faults, got.Runs)
	}
	t.Logf("8 faults shrunk to %d in %d re-runs", len(got.Minimal.Faults), got.Runs)
}

// MaxRuns ends a shrink with the smallest schedule found, and says so.
func TestShrinkStopsAtMaxRunsWithTheSmallestSoFar(t *testing.T) {
	var calls int
	rerun := needsLateLongCrashAndPartition(&calls)
	first, drawn := rerun(drawnEight())
	got, err := shrink("story", 7, first, drawn, rerun, ShrinkOptions{MaxRuns: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Exhausted || got.Runs != 4 || calls != 4 {
		t.Fatalf("exhausted %v after %d runs (%d made), want it ended at 4", got.Exhausted, got.Runs, calls)
	}
	if result, _ := rerun(got.Minimal.Faults); FailureOf(result) != got.Failure {
		t.Fatalf("the schedule kept, %v, fails %q, want %q", got.Minimal.Faults, FailureOf(result), got.Failure)
	}
}

// A seed whose chaos run passes has nothing to shrink.
func TestShrinkOfAPassingSeedIsAnError(t *testing.T) {
	sc, err := scenarios.Find("wordpress/relocate")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Shrink(sc, 1, ShrinkOptions{})
	if !errors.Is(err, ErrPasses) || got.Runs != 1 {
		t.Fatalf("Shrink of a passing seed: %v after %d runs, want ErrPasses after the one", err, got.Runs)
	}
}

// FailureOf names the first invariant a checker reported, else the step that
// ended the run; a pass, an errored bed and a seeded bug's miss have none.
func TestFailureOfNamesTheInvariantElseTheStep(t *testing.T) {
	step := reports.Violation{Invariant: "scenario", Message: "fail over to site-b: timed out"}
	for _, c := range []struct {
		result reports.Result
		want   string
	}{
		{reports.Result{Verdict: reports.Passed}, ""},
		{reports.Result{Verdict: reports.Errored, Error: "no bed"}, ""},
		{reports.Result{Verdict: reports.Failed, Violations: []reports.Violation{{Invariant: reports.BugMissed}}}, ""},
		{reports.Result{Verdict: reports.Failed, Violations: []reports.Violation{{Invariant: "chain: live ends"}, step}},
			"invariant: chain: live ends"},
		{reports.Result{Verdict: reports.Failed, Violations: []reports.Violation{step},
			Phases: []reports.Phase{{Name: "protect", OK: true}, {Name: "fail over to site-b"}}}, "step: fail over to site-b"},
	} {
		if got := FailureOf(c.result); got != c.want {
			t.Errorf("FailureOf(%+v) = %q, want %q", c.result, got, c.want)
		}
	}
}

// The schedule a chaos run drew, written to a file and read back, replays
// that run exactly: the same event log and verdict, and the same faults
// injected at the same points. It is what a shrink starts from.
func TestADrawnScheduleReplaysItsChaosRunExactly(t *testing.T) {
	runs := []struct {
		scenario string
		seed     uint64
	}{{"wordpress/failover", 2}, {"hub/deploy", 1}} // five faults of four classes; hub cuts
	if testing.Short() {
		runs = runs[:1] // the hub's story takes ten seconds
	}
	faults := 0
	for _, run := range runs {
		name, seed := run.scenario, run.seed
		sc, err := scenarios.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		drawnRun, drawn := OneWith(sc, seed, RunOptions{Chaos: true})
		file := filepath.Join(t.TempDir(), "faults.json")
		if err := scenarios.WriteSchedule(file, scenarios.Schedule{Scenario: name, Seed: seed, Faults: drawn.Faults}); err != nil {
			t.Fatal(err)
		}
		schedule, err := scenarios.ReadSchedule(file)
		if err != nil {
			t.Fatal(err)
		}
		replayed, again := OneWith(sc, seed, RunOptions{Faults: &schedule, FaultsFile: file})
		if replayed.EventLogHash != drawnRun.EventLogHash || replayed.Verdict != drawnRun.Verdict {
			t.Errorf("%s seed %d: the drawn schedule replays as %s %s, the chaos run was %s %s", name, seed,
				replayed.EventLogHash, replayed.Verdict, drawnRun.EventLogHash, drawnRun.Verdict)
		}
		if !reflect.DeepEqual(again.Faults, drawn.Faults) || !slices.Equal(again.Points, drawn.Points) {
			t.Errorf("%s seed %d: replayed faults %v at %d points, drawn %v at %d", name, seed,
				again.Faults, len(again.Points), drawn.Faults, len(drawn.Points))
		}
		if !strings.Contains(replayed.Replay, "--faults "+file) {
			t.Errorf("%s seed %d: replay command %q does not name the schedule", name, seed, replayed.Replay)
		}
		faults += len(drawn.Faults)
	}
	if faults == 0 {
		t.Fatal("no run drew a fault: nothing was replayed")
	}
}
