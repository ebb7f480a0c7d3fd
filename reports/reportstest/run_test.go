package reportstest

import (
	"reflect"
	"testing"

	"github.com/baton-dr/baton/reports"
)

func TestSampleRunIsReproducible(t *testing.T) {
	if !reflect.DeepEqual(SampleRun(), SampleRun()) {
		t.Fatal("two sample runs differ")
	}
	if reflect.DeepEqual(failoverResult(wordpress, 1, false).Timeline, failoverResult(gitea, 1, false).Timeline) {
		t.Error("two scenarios on one seed tell the same story")
	}
}

// TestSampleRunTellsTheStory pins the facts the renderers' tests rely on.
func TestSampleRunTellsTheStory(t *testing.T) {
	verdicts := map[reports.Verdict]int{}
	for _, r := range SampleRun().Results {
		verdicts[r.Verdict]++
		for i := 1; i < len(r.Timeline); i++ {
			if r.Timeline[i].At.Before(r.Timeline[i-1].At) {
				t.Fatalf("%s seed %d: timeline out of order at %d", r.Scenario, r.Seed, i)
			}
		}
		switch {
		case r.Scenario == "wordpress/twelve-moves":
			for _, c := range r.Chains {
				for i, m := range c.Members {
					if int(m.Generation) != i || (i > 0 && m.Site == c.Members[i-1].Site) {
						t.Errorf("seed %d: member %d is %+v", r.Seed, i, m)
					}
				}
				if len(c.Members) != 13 {
					t.Errorf("seed %d: %d members, want 13", r.Seed, len(c.Members))
				}
			}
		case r.Verdict == reports.Failed:
			if r.Seed != SampleFailedSeed || len(r.Violations) != 2 || len(r.Violations[0].Window) != 8 {
				t.Errorf("failed seed %d with %d violations", r.Seed, len(r.Violations))
			}
		case r.Verdict == reports.Passed && r.Scenario != "wordpress/twelve-moves":
			if len(r.Failovers) != 4 || r.Failovers[0].RPO == 0 || r.Failovers[2].LostWrites != 0 {
				t.Errorf("%s seed %d: fail-overs %+v", r.Scenario, r.Seed, r.Failovers)
			}
		}
	}
	if verdicts[reports.Passed] != 9 || verdicts[reports.Failed] != 1 || verdicts[reports.Errored] != 1 {
		t.Errorf("verdicts %v", verdicts)
	}
}
