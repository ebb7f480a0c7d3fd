//go:build baton_bugs

package bugs_test

import (
	"slices"
	"testing"

	"github.com/baton-dr/baton/internal/bugs"
)

// TestSwitchSelectsExactlyTheBugsNamedUntilRestored: the runs of one
// process switch one bug on, then restore what was on before.
func TestSwitchSelectsExactlyTheBugsNamedUntilRestored(t *testing.T) {
	before := bugs.Selected()
	restore, err := bugs.Switch(bugs.Walk8)
	if err != nil {
		t.Fatal(err)
	}
	if !bugs.On(bugs.Walk8) || bugs.On(bugs.DemoteEnd) || !slices.Equal(bugs.Selected(), []bugs.Name{bugs.Walk8}) {
		t.Fatalf("after Switch(walk-8): selected %v", bugs.Selected())
	}
	off, err := bugs.Switch()
	if err != nil {
		t.Fatal(err)
	}
	if len(bugs.Selected()) != 0 {
		t.Fatalf("Switch() left %v on", bugs.Selected())
	}
	off()
	restore()
	if !slices.Equal(bugs.Selected(), before) {
		t.Fatalf("restored %v, want %v", bugs.Selected(), before)
	}
	if _, err := bugs.Switch("demote-the-world"); err == nil {
		t.Fatal("Switch took a name the catalogue lacks")
	}
}
