package bugs_test

import (
	"strings"
	"testing"

	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/scenarios"
)

// TestEveryBugNamesWhereItComesFromAndWhatCatchesIt: a catalogue entry
// without its seed sentence, its one place in the code or a story that
// exists to catch it could not be checked by anyone.
func TestEveryBugNamesWhereItComesFromAndWhatCatchesIt(t *testing.T) {
	seen := map[bugs.Name]bool{}
	for _, b := range bugs.Catalogue() {
		if seen[b.Name] {
			t.Errorf("%s is in the catalogue twice", b.Name)
		}
		seen[b.Name] = true
		if b.Does == "" || b.Rule == "" || b.Seed == "" || b.Sentence == "" || b.Where == "" {
			t.Errorf("%s: an empty field in %+v", b.Name, b)
		}
		if len(b.Scenarios) == 0 {
			t.Errorf("%s: no scenario should catch it", b.Name)
		}
		for _, name := range b.Scenarios {
			if _, err := scenarios.Find(name); err != nil {
				t.Errorf("%s: %v", b.Name, err)
			}
		}
	}
	if len(seen) < 7 {
		t.Errorf("the catalogue holds %d bugs; the seeds report at least 7", len(seen))
	}
}

func TestASelectionNamesBugsOfTheCatalogue(t *testing.T) {
	names, err := bugs.Parse(" walk-8,demote-end,walk-8,")
	if err != nil || len(names) != 2 || names[0] != bugs.Walk8 || names[1] != bugs.DemoteEnd {
		t.Fatalf("Parse: %v %v, want [walk-8 demote-end]", names, err)
	}
	if _, err := bugs.Parse("demote-end,demote-the-world"); err == nil || !strings.Contains(err.Error(), `"demote-the-world"`) {
		t.Fatalf("an unknown name: %v, want an error naming it", err)
	}
	t.Setenv(bugs.Env, "no-such-bug")
	if _, err := bugs.FromEnv(); err == nil || !strings.Contains(err.Error(), "no-such-bug") {
		t.Fatalf("FromEnv with an unknown name: %v, want an error naming it", err)
	}
	t.Setenv(bugs.Env, "")
	if names, err := bugs.FromEnv(); err != nil || len(names) != 0 {
		t.Fatalf("FromEnv with no selection: %v %v", names, err)
	}
}
