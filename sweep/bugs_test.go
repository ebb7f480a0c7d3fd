//go:build baton_bugs

package sweep_test

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/sweep"
)

// TestTheMatrixCatchesEverySeededBug switches each bug of the catalogue on
// in turn (a build with -tags baton_bugs) and runs the scenarios that
// should catch it, on one seed: every bug must be caught, each catch by a
// check of the bed with the command that replays it, bug included; the
// same scenarios with no bug pass.
func TestTheMatrixCatchesEverySeededBug(t *testing.T) {
	run, err := sweep.Matrix(context.Background(), sweep.MatrixOptions{Bed: "sim", Bugs: bugs.Catalogue(), FirstSeed: 1, Seeds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Matrix) != len(bugs.Catalogue()) {
		t.Fatalf("%d rows for %d bugs", len(run.Matrix), len(bugs.Catalogue()))
	}
	for _, row := range run.Matrix {
		r, caught := row.CaughtBy()
		if !caught {
			t.Errorf("%s went unnoticed by %v", row.Bug, row.Scenarios)
			continue
		}
		check, message, after := r.Catch()
		if !strings.HasPrefix(r.Replay, bugs.Env+"="+row.Bug+" ") || check == "" {
			t.Errorf("%s: caught by %q without a replay that switches it on (%q)", row.Bug, check, r.Replay)
		}
		t.Logf("%s caught by %s seed %d after %s: %s: %s", row.Bug, r.Scenario, r.Seed, after, check, message)
	}
	for _, r := range run.Results {
		if r.Verdict != reports.Passed {
			t.Errorf("with no bug on, %s seed %d %s: %v", r.Scenario, r.Seed, r.Verdict, r.Violations)
		}
	}
	if len(bugs.Selected()) != 0 {
		t.Errorf("the matrix left %v switched on", bugs.Selected())
	}
}

// TestTheReplayCommandReproducesAFailureExactly runs a caught seed again, as
// its replay command would: the same event log, byte for byte, and the same
// violation.
func TestTheReplayCommandReproducesAFailureExactly(t *testing.T) {
	switchOn(t, bugs.DemoteEnd)
	sc := scenario(t, "wordpress/failover")
	first, again := sweep.One(sc, 2, false), sweep.One(sc, 2, false)
	if !first.Caught() {
		t.Fatal("the seeded bug was not caught on seed 2")
	}
	if first.EventLogHash != again.EventLogHash || first.Violations[0].Message != again.Violations[0].Message {
		t.Fatalf("replay diverged: %s %q vs %s %q", first.EventLogHash, first.Violations[0].Message,
			again.EventLogHash, again.Violations[0].Message)
	}
}

// TestAScenarioThatCannotCatchABugSaysItMissedIt: a run with a bug on that
// passes every check is no PASSED run.
func TestAScenarioThatCannotCatchABugSaysItMissedIt(t *testing.T) {
	switchOn(t, bugs.Walk8)
	r := sweep.One(scenario(t, "gitea/protect"), 1, false)
	if r.Verdict != reports.Failed || r.Caught() || r.Violations[len(r.Violations)-1].Invariant != reports.BugMissed {
		t.Fatalf("gitea/protect with walk-8 on: %s %v", r.Verdict, r.Violations)
	}
}

// switchOn switches the bug on for the test, and every bug off after it.
func switchOn(t *testing.T, name bugs.Name) {
	t.Helper()
	restore, err := bugs.Switch(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restore)
}
