package sweep_test

import (
	"context"
	"testing"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

// scenario is the scenario named, found or the test's end.
func scenario(t testing.TB, name string) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// sweepSeeds sweeps seeds 1 to seeds of the scenario named.
func sweepSeeds(t *testing.T, name string, seeds int) reports.Run {
	t.Helper()
	return sweep.Run(context.Background(), sweep.Options{Scenarios: []scenarios.Scenario{scenario(t, name)}, FirstSeed: 1, Seeds: seeds})
}

func TestTheSameSeedGivesTheSameEventLog(t *testing.T) {
	sc := scenario(t, "gitea/failover")
	first, again := sweep.One(sc, 7, true), sweep.One(sc, 7, true)
	if first.EventLogHash == "" || first.EventLogHash != again.EventLogHash {
		t.Fatalf("seed 7 gave event logs %q and %q", first.EventLogHash, again.EventLogHash)
	}
	if other := sweep.One(sc, 8, true); other.EventLogHash == first.EventLogHash {
		t.Fatalf("seeds 7 and 8 gave the same event log %s", first.EventLogHash)
	}
}

// TestASweepIsTheSameWhateverTheWorkers checks that parallel workers change
// nothing but the wall time.
func TestASweepIsTheSameWhateverTheWorkers(t *testing.T) {
	options := sweep.Options{Scenarios: []scenarios.Scenario{scenario(t, "wordpress/relocate")}, FirstSeed: 10, Seeds: 4}
	options.Workers = 1
	one := sweep.Run(context.Background(), options)
	options.Workers = 3
	three := sweep.Run(context.Background(), options)
	if len(one.Results) != 4 || len(three.Results) != 4 {
		t.Fatalf("%d and %d results, want 4", len(one.Results), len(three.Results))
	}
	for i := range one.Results {
		a, b := one.Results[i], three.Results[i]
		if a.Seed != b.Seed || a.EventLogHash != b.EventLogHash || a.Verdict != reports.Passed {
			t.Errorf("result %d: seed %d %s %s vs seed %d %s", i, a.Seed, a.Verdict, a.EventLogHash, b.Seed, b.EventLogHash)
		}
	}
}
