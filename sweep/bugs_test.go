//go:build baton_bugs

package sweep_test

import (
	"testing"

	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/sweep"
)

// TestASweepCatchesDemotingTheEnd switches the first seed's bug on (a build
// with -tags baton_bugs): Demote acts on the chain's end. A sweep of the
// fail-over story must fail, each failure with the command that replays it.
func TestASweepCatchesDemotingTheEnd(t *testing.T) {
	switchOn(t, bugs.DemoteEnd)
	run := sweepSeeds(t, "wordpress/failover", 5)
	failed := 0
	for _, r := range run.Results {
		if r.Verdict == reports.Passed {
			continue
		}
		failed++
		if r.Replay == "" || len(r.Violations) == 0 {
			t.Errorf("seed %d failed without a violation or a replay command", r.Seed)
		}
		t.Logf("seed %d caught: %s (replay: %s)", r.Seed, r.Violations[0].Message, r.Replay)
	}
	if failed == 0 {
		t.Fatal("demoting the chain's end went unnoticed by five seeds of the fail-over story")
	}
}

// TestTheReplayCommandReproducesAFailureExactly runs a caught seed again, as
// its replay command would: the same event log, byte for byte, and the same
// violation.
func TestTheReplayCommandReproducesAFailureExactly(t *testing.T) {
	switchOn(t, bugs.DemoteEnd)
	sc := scenario(t, "wordpress/failover")
	first, again := sweep.One(sc, 2, false), sweep.One(sc, 2, false)
	if first.Verdict == reports.Passed {
		t.Fatal("the seeded bug was not caught on seed 2")
	}
	if first.EventLogHash != again.EventLogHash || first.Violations[0].Message != again.Violations[0].Message {
		t.Fatalf("replay diverged: %s %q vs %s %q", first.EventLogHash, first.Violations[0].Message,
			again.EventLogHash, again.Violations[0].Message)
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
