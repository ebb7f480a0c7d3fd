//go:build baton_bugs

package sweep_test

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

// A failing chaos seed of a seeded bug shrinks to at most a third of the
// faults it drew (at most one when it drew fewer than three), and the shrunk
// schedule, replayed on its own, still fails the same way and catches the
// bug. The seeds drew four and three faults. The seeded bugs fail
// their stories with no fault at all, so each shrinks to the empty schedule;
// TestShrinkKeepsOnlyWhatTheFailureNeedsAsShortAndLateAsItCanBe covers a
// failure that needs faults.
func TestShrunkScheduleOfASeededBugReplaysItsFailure(t *testing.T) {
	for _, c := range []struct {
		bug      bugs.Name
		scenario string
		seed     uint64
	}{
		{bugs.DemoteEnd, "wordpress/failover", 2},
		{bugs.PromoteLocal, "gitea/relocate", 2},
	} {
		t.Run(string(c.bug), func(t *testing.T) {
			restore, err := bugs.Switch(c.bug)
			if err != nil {
				t.Fatal(err)
			}
			defer restore()
			sc, err := scenarios.Find(c.scenario)
			if err != nil {
				t.Fatal(err)
			}
			started := time.Now()
			shrunk, err := sweep.Shrink(sc, c.seed, sweep.ShrinkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			original, minimal := len(shrunk.Original.Faults), len(shrunk.Minimal.Faults)
			if original < 3 {
				t.Fatalf("%s seed %d drew %d faults: pick a seed that draws at least three", c.scenario, c.seed, original)
			}
			if minimal > original/3 {
				t.Errorf("%d faults shrunk to %d, want at most a third", original, minimal)
			}
			replayed, _ := sweep.OneWith(sc, c.seed, sweep.RunOptions{Faults: &shrunk.Minimal})
			if sweep.FailureOf(replayed) != shrunk.Failure || !replayed.Caught() {
				t.Errorf("the shrunk schedule %v fails %q (caught %v), want %q", shrunk.Minimal.Faults,
					sweep.FailureOf(replayed), replayed.Caught(), shrunk.Failure)
			}
			t.Logf("%s seed %d: %d faults shrunk to %d (%s) in %d runs, %s", c.scenario, c.seed, original, minimal,
				shrunk.Failure, shrunk.Runs, time.Since(started).Round(time.Millisecond))
		})
	}
}
