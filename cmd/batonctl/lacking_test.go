package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/scenarios"
)

// Every scenario of the catalogue is either run by the local bed or named,
// with its reason, in the line make localbed ends with -- a new story cannot
// slip past both; what the local bed lacks is a capability (bed.Can) or its
// wall time, and the stories it does tell are run.
func TestEveryScenarioRunsOnTheLocalBedOrSaysWhatIsMissing(t *testing.T) {
	catalogue := scenarios.Catalogue()
	lacking := localLacking(catalogue)
	for _, sc := range catalogue {
		err := localRuns(sc)
		_, story, _ := strings.Cut(sc.Name, "/")
		switch {
		case err == nil && strings.Contains(lacking, "/"+story+" "):
			t.Errorf("%s runs on the local bed, yet the lacking line names it: %s", sc.Name, lacking)
		case err != nil && !strings.Contains(lacking, "/"+story+" ("):
			t.Errorf("%s does not run on the local bed (%v), yet the lacking line does not name it: %s", sc.Name, err, lacking)
		}
	}
	for name, want := range map[string]error{"wordpress/relocate": nil, "gitea/protect": nil, "wordpress/failover": nil,
		"gitea/drill": bed.ErrNotSupported, "hub/deploy": bed.ErrNotSupported} {
		sc, err := scenarios.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := localRuns(sc); !errors.Is(got, want) || (want == nil) != (got == nil) {
			t.Errorf("%s on the local bed: %v, want %v", name, got, want)
		}
	}
	if err := localRuns(mustFind(t, "wordpress/moves")); err == nil || !strings.Contains(err.Error(), "wall time") {
		t.Errorf("wordpress/moves on the local bed: %v, want it declined for its wall time", err)
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

// The real bed's line folds a story every family lacks into "*" and names
// no story it tells, with real.Supports' reason.
func TestTheRealBedsLackingLineFoldsAStorysFamilies(t *testing.T) {
	catalogue := []scenarios.Scenario{{Name: "gitea/drill"}, {Name: "wordpress/drill"}, {Name: "gitea/relocate"}, {Name: "hub/deploy"}}
	want := "*/drill (test fail-overs are not supported on the real bed); " +
		"hub/deploy (the hub's deployment flow (OCM, baton-hub) is not supported on the real bed)"
	if line := realLacking(catalogue); line != want {
		t.Errorf("lacking %q, want %q", line, want)
	}
}
