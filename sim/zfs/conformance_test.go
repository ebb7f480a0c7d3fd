package zfs

import (
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// TestConformance runs the Pool suite on the simulation, and checks the
// simulation's own bookkeeping after every subtest.
func TestConformance(t *testing.T) {
	seed := uint64(0)
	pooltest.Run(t, func(t *testing.T) backend.Pool {
		seed++
		p := New(Options{Name: "tank", SizeBytes: 1 << 30, Seed: seed})
		t.Cleanup(func() {
			if err := p.Verify(); err != nil {
				t.Errorf("after the subtest: %v", err)
			}
		})
		return p
	})
}
