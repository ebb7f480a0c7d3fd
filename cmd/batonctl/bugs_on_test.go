//go:build baton_bugs

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/bugs"
)

// TestALocalMatrixRefusesABugWhoseStoriesItLacks: the local bed does not
// tell the twelve moves, so walk-8 asked of it is an error naming them.
func TestALocalMatrixRefusesABugWhoseStoriesItLacks(t *testing.T) {
	_, err := runBatonctl(t, time.Now(), "bugs", "matrix", "--bed", "local", "--bugs", "walk-8")
	if err == nil || !strings.Contains(err.Error(), "bug walk-8: the local bed tells none of its stories: gitea/moves") {
		t.Errorf("bugs matrix --bed local --bugs walk-8: %v", err)
	}
}

// TestAShrunkScheduleReplaysTheSeededBug: chaos shrink of a seeded bug's
// failing seed writes a smaller schedule and prints the command that
// replays it, bug included; scenario run --faults of that file fails again.
func TestAShrunkScheduleReplaysTheSeededBug(t *testing.T) {
	restore, err := bugs.Switch(bugs.DemoteEnd) // the environment is read once a process
	if err != nil {
		t.Fatal(err)
	}
	defer restore()
	file := filepath.Join(t.TempDir(), "demote.faults.json")
	out, err := runBatonctl(t, time.Now(), "chaos", "shrink", "--scenario", "wordpress/failover", "--seed", "2", "--out", file)
	if err != nil {
		t.Fatalf("chaos shrink: %v\n%s", err, out)
	}
	replay := "BATON_BUG=demote-end batonctl scenario run wordpress/failover --bed sim --seed 2 --faults " + file
	if !strings.Contains(out, "with 4 faults drawn; it needs 0 of them") || !strings.Contains(out, replay) {
		t.Errorf("chaos shrink printed:\n%s\nwant 4 faults shrunk to 0 and the replay %q", out, replay)
	}
	out, err = runBatonctl(t, time.Now(), "scenario", "run", "wordpress/failover", "--faults", file)
	if err == nil || !strings.Contains(out, "wordpress/failover seed 2: FAILED") {
		t.Errorf("scenario run --faults %s: %v\n%s\nwant seed 2 to fail again", file, err, out)
	}
}
