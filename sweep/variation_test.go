package sweep_test

import (
	"testing"
	"time"
)

// TestSeedsVaryWhatMatters: a sweep explores. Before seeds drew the timing
// (issue 15), every seed of the fail-over story had one RPO and one
// simulated length, only the lost-write counts and hashes differing.
func TestSeedsVaryWhatMatters(t *testing.T) {
	run := sweepSeeds(t, "wordpress/failover", 6)
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
