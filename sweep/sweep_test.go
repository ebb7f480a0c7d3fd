package sweep_test

import (
	"context"
	"testing"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

func TestTheSameSeedGivesTheSameEventLog(t *testing.T) {
	sc, err := scenarios.Find("gitea/failover")
	if err != nil {
		t.Fatal(err)
	}
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
	sc, err := scenarios.Find("wordpress/relocate")
	if err != nil {
		t.Fatal(err)
	}
	options := sweep.Options{Scenarios: []scenarios.Scenario{sc}, FirstSeed: 10, Seeds: 4}
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
