//go:build !baton_bugs

package bugs_test

import (
	"strings"
	"testing"

	"github.com/baton-dr/baton/internal/bugs"
)

// TestADefaultBuildRefusesEverySelection: a bug asked of a build that
// carries none is an error naming it, never a run that believes it is on.
func TestADefaultBuildRefusesEverySelection(t *testing.T) {
	t.Setenv(bugs.Env, "demote-end")
	if _, err := bugs.FromEnv(); err == nil || !strings.Contains(err.Error(), "without -tags baton_bugs") {
		t.Fatalf("FromEnv: %v, want a refusal naming the tag", err)
	}
	if _, err := bugs.Switch(bugs.DemoteEnd); err == nil || !strings.Contains(err.Error(), "demote-end") {
		t.Fatalf("Switch: %v, want a refusal naming the bug", err)
	}
	if len(bugs.Selected()) != 0 {
		t.Fatal("a default build selects bugs")
	}
}
