package sweep_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

// TestSeedsVaryWhatMatters: a sweep explores. Before seeds drew the timing
// (issue 15), every seed of the fail-over story had one RPO and one
// simulated length, only the lost-write counts and hashes differing.
func TestSeedsVaryWhatMatters(t *testing.T) {
	sc, err := scenarios.Find("wordpress/failover")
	if err != nil {
		t.Fatal(err)
	}
	run := sweep.Run(context.Background(), sweep.Options{Scenarios: []scenarios.Scenario{sc}, FirstSeed: 1, Seeds: 6})
	rpos, lengths := map[time.Duration]bool{}, map[time.Duration]bool{}
	for _, r := range run.Results {
		for _, f := range r.Failovers {
			if !f.Planned {
				rpos[f.RPO] = true
			}
		}
		lengths[r.Duration] = true
	}
	if len(rpos) < 4 || len(lengths) < 4 {
		t.Fatalf("6 seeds gave %d RPOs and %d simulated lengths: the seeds do not vary the runs", len(rpos), len(lengths))
	}
}
