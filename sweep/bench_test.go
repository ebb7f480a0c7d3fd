package sweep_test

import (
	"testing"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/sweep"
)

// BenchmarkFailoverAndBack is the compass figure of the simulation: one seed of
// the full WordPress fail-over and fail-back story, per op.
func BenchmarkFailoverAndBack(b *testing.B) {
	for _, name := range []string{"wordpress/failover", "gitea/failover"} {
		sc := scenario(b, name)
		b.Run(name, func(b *testing.B) {
			seed := uint64(1)
			for b.Loop() {
				if r := sweep.One(sc, seed, false); r.Verdict != reports.Passed {
					b.Fatalf("seed %d: %s", seed, r.Verdict)
				}
				seed++
			}
		})
	}
}
