package bed

import (
	"math/rand/v2"
	"time"
)

// WallClock is the time and the randomness that bed/apps' Platform asks of
// a bed on the wall clock. bed/local and bed/real embed it in their
// platforms, so both give their applications one clock and one seeding rule.
type WallClock struct {
	// Seed is the bed's seed.
	Seed uint64
	// Deployed counts the applications the bed has deployed so far.
	Deployed func() int
}

// Now is the host's clock. The writes are acknowledged on it, and the sites
// order their snapshots by it: the local bed's processes and the kind nodes
// share the host's kernel.
func (WallClock) Now() time.Time { return time.Now() }

// At renders t as the bed's reports do.
func (WallClock) At(t time.Time) string { return t.Format(time.RFC3339Nano) }

// Rand seeds a new workload model from the bed's seed, the model's name and
// how many applications the bed deployed before it, so that a run with the
// same seed and scenario draws the same operations.
func (c WallClock) Rand(name string) *rand.Rand {
	return rand.New(rand.NewPCG(c.Seed, uint64(len(name))<<32|uint64(c.Deployed())))
}
