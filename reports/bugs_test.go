package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

var bugEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func bugRun(scenario string, seed uint64, verdict Verdict, violations ...Violation) Result {
	return Result{Scenario: scenario, Seed: seed, Verdict: verdict, Started: bugEpoch, Duration: 10 * time.Minute,
		Replay: "batonctl sim run --scenario " + scenario, Violations: violations}
}

// TestARunWithABugOnNeverPasses: a run that passed with a bug on missed it
// and fails, naming it; one that failed on a check of its own caught it.
func TestARunWithABugOnNeverPasses(t *testing.T) {
	missed := WithBugs(bugRun("gitea/drill", 1, Passed), []string{"walk-8"})
	if missed.Verdict != Failed || missed.Caught() || len(missed.Violations) != 1 || missed.Violations[0].Invariant != BugMissed ||
		!strings.Contains(missed.Violations[0].Message, "walk-8") {
		t.Fatalf("a pass with a bug on: %+v", missed)
	}
	caught := WithBugs(bugRun("gitea/moves", 1, Failed, Violation{Invariant: "scenario", Message: "stage failed",
		At: bugEpoch.Add(3 * time.Minute)}), []string{"walk-8"})
	if !caught.Caught() || len(caught.Violations) != 1 {
		t.Fatalf("a failure with a bug on: %+v", caught)
	}
	if check, _, after := caught.Catch(); check != "scenario" || after != 3*time.Minute {
		t.Fatalf("Catch: %s after %s", check, after)
	}
	if errored := WithBugs(Result{Verdict: Errored}, []string{"walk-8"}); errored.Caught() {
		t.Fatal("an errored bed caught a bug")
	}
	if plain := WithBugs(bugRun("gitea/drill", 1, Passed), nil); plain.Verdict != Passed || plain.Bugs != nil {
		t.Fatalf("a run with no bug on: %+v", plain)
	}
}

func sampleMatrix() Run {
	caught := WithBugs(bugRun("gitea/failover", 2, Failed, Violation{Invariant: "application: its primary is fenced",
		Message: "gitea writes on a demoted member", At: bugEpoch.Add(5 * time.Minute)}), []string{"demote-end"})
	missed := WithBugs(bugRun("gitea/moves", 1, Passed), []string{"walk-8"})
	return Run{Name: "bugs matrix", Bed: "local", Started: bugEpoch, Results: []Result{bugRun("gitea/failover", 2, Passed)},
		Matrix: []BugRow{
			{Bug: "demote-end", Does: "demotes the end", Scenarios: []string{"gitea/failover"}, Runs: []Result{caught}},
			{Bug: "walk-8", Does: "stops after 8 hops", Scenarios: []string{"gitea/moves"}, Runs: []Result{missed}},
			{Bug: "bubble-no-volumemode", Scenarios: []string{"gitea/drill"}, Lacking: []string{"gitea/drill: no drills here"}},
		}}
}

// TestTheMatrixSaysCaughtMissedAndNotRunInEveryReport: each row's verdict
// reaches results.json, junit.xml (a testcase per bug: passed, failed,
// skipped) and report.html's banner, which fails while a bug is missed.
func TestTheMatrixSaysCaughtMissedAndNotRunInEveryReport(t *testing.T) {
	run := sampleMatrix()
	if got := CountBugs(run.Matrix); got != (BugTotals{Bugs: 3, Caught: 1, Missed: 1, NotRun: 1}) {
		t.Fatalf("CountBugs: %+v", got)
	}
	file := NewJSONFile(run)
	if len(file.Bugs) != 3 || file.Bugs[0].Verdict != BugCaught || file.Bugs[0].CaughtBy == nil ||
		file.Bugs[0].CaughtBy.Check != "application: its primary is fenced" || file.Bugs[0].CaughtBy.AfterMs != 300000 ||
		file.Bugs[1].Verdict != BugMissedRow || file.Bugs[2].Verdict != BugNotRun {
		out, _ := json.Marshal(file.Bugs)
		t.Fatalf("results.json bugs: %s", out)
	}
	var junit bytes.Buffer
	if err := WriteJUnit(&junit, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<testsuite name="seeded bugs" package="local" tests="3" disabled="0" skipped="1" errors="0" failures="1"`,
		`<failure message="walk-8 missed by gitea/moves" type="missed">`, `<skipped message="not run on the local bed: gitea/drill: no drills here"`} {
		if !strings.Contains(junit.String(), want) {
			t.Errorf("junit.xml lacks %s", want)
		}
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<div class="banner failed" id="bugs-verdict"><b>3 seeded bugs:</b> 1 caught, 1 missed, 0 errored, 1 not run on this bed</div>`,
		`<b>1 results with no bug on:</b>`, `<td><b>walk-8</b>`, `gitea/failover seed 2`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
}

// TestARunWithoutAMatrixRendersAsBefore: the matrix adds nothing to the
// reports of other runs.
func TestARunWithoutAMatrixRendersAsBefore(t *testing.T) {
	run := sampleMatrix()
	run.Matrix = nil
	var junit, page, results bytes.Buffer
	if err := WriteJUnit(&junit, run); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, run); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&results, run); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(junit.String(), "seeded bugs") || strings.Contains(page.String(), "bugs-verdict") ||
		strings.Contains(results.String(), `"bugs"`) {
		t.Fatal("a run without a matrix renders one")
	}
}
