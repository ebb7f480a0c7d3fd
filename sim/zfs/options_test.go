package zfs

import (
	"fmt"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// TestSeedMakesGUIDsReplayable: one seed, one sequence of GUIDs; another
// seed or pool name, another sequence.
func TestSeedMakesGUIDsReplayable(t *testing.T) {
	guids := func(options Options) string {
		p := New(options)
		mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
		for _, s := range []string{"a", "b", "c"} {
			mustDo(t, p.Snapshot("v", s))
		}
		list, err := p.Snapshots("v")
		mustDo(t, err)
		return fmt.Sprint(list)
	}
	base := Options{SizeBytes: 1 << 30, Seed: 42}
	if first, again := guids(base), guids(base); first != again {
		t.Fatal("one seed gave two GUID sequences")
	}
	other, renamed := base, base
	other.Seed = 43
	renamed.Name = "pool2"
	if guids(other) == guids(base) || guids(renamed) == guids(base) {
		t.Fatal("another seed or pool name repeated the GUIDs")
	}
	fixed := base
	next := uint64(0)
	fixed.GUIDs = func() uint64 { next += 7; return next % 14 } // 7, 0, 7, 0: zeros and repeats are drawn again
	p := New(fixed)
	mustDo(t, p.CreateVolume("v", 1<<20, backend.Thin))
	mustDo(t, p.Snapshot("v", "a"))
	if err := func() (err error) {
		defer func() {
			if recover() != nil {
				err = fmt.Errorf("panicked")
			}
		}()
		return p.Snapshot("v", "b")
	}(); err == nil {
		t.Fatal("a GUID source that only repeats itself went unnoticed")
	}
}

// TestOptionsRefuseImpossiblePools: a misconfigured simulation panics.
func TestOptionsRefuseImpossiblePools(t *testing.T) {
	for _, options := range []Options{{BlockSizeBytes: 3000}, {BlockSizeBytes: 1 << 20}, {Name: "a/b"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%+v) did not panic", options)
				}
			}()
			New(options)
		}()
	}
}
