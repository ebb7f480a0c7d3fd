package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/scenarios"
)

// Every scenario of the catalogue is either run by a wall-clock bed or
// named, with its reason, in the line make localbed and make realbed end
// with -- a new story cannot slip past both; what a bed lacks is a
// capability (bed.Can, before a bed is made) or the wall time it declines,
// and the stories it does tell are run. The local bed offers no drill; the
// real bed drills, but offers no storage requests of the hub and no fault
// beyond partitions; neither replaces the operator (*/replace) yet: nothing
// starts a story there that it cannot finish.
func TestEveryScenarioRunsOnAWallClockBedOrSaysWhatIsMissing(t *testing.T) {
	catalogue := scenarios.Catalogue()
	for _, b := range []struct {
		name    string
		runs    func(scenarios.Scenario) error
		lacking string
		drill   error
	}{{"local", localRuns, localLacking(catalogue), bed.ErrNotSupported}, {"real", realRuns, realLacking(catalogue), nil}} {
		for _, sc := range catalogue {
			err := b.runs(sc)
			_, story, _ := strings.Cut(sc.Name, "/")
			switch {
			case err == nil && strings.Contains(b.lacking, "/"+story+" "):
				t.Errorf("%s runs on the %s bed, yet the lacking line names it: %s", sc.Name, b.name, b.lacking)
			case err != nil && !strings.Contains(b.lacking, "/"+story+" ("):
				t.Errorf("%s does not run on the %s bed (%v), yet the lacking line does not name it: %s", sc.Name, b.name, err, b.lacking)
			}
		}
		for name, want := range map[string]error{"wordpress/relocate": nil, "gitea/protect": nil, "wordpress/failover": nil,
			"gitea/drill": b.drill, "hub/deploy": bed.ErrNotSupported, "wordpress/replace": bed.ErrNotSupported} {
			if got := b.runs(mustFind(t, name)); !errors.Is(got, want) || (want == nil) != (got == nil) {
				t.Errorf("%s on the %s bed: %v, want %v", name, b.name, got, want)
			}
		}
		if err := b.runs(mustFind(t, "wordpress/moves")); err == nil || errors.Is(err, bed.ErrNotSupported) || !strings.Contains(err.Error(), "wall time") {
			t.Errorf("wordpress/moves on the %s bed: %v, want it declined for its wall time", b.name, err)
		}
	}
}

func mustFind(t *testing.T, name string) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// A bed's line folds a story every family lacks into "*" and names no
// story it tells, with bed.Can's reason.
func TestTheLocalBedsLackingLineFoldsAStorysFamilies(t *testing.T) {
	var catalogue []scenarios.Scenario
	for _, name := range []string{"gitea/drill", "wordpress/drill", "gitea/relocate", "hub/deploy"} {
		catalogue = append(catalogue, mustFind(t, name))
	}
	want := "*/drill (a test fail-over (drill): not supported on this bed (the local bed)); " +
		"hub/deploy (the hub's storage requests: not supported on this bed (the local bed))"
	if line := localLacking(catalogue); line != want {
		t.Errorf("lacking %q, want %q", line, want)
	}
}
