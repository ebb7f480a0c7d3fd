package zfs

import (
	"errors"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// TestAFillerMakesThePoolFullUntilItStops walks a pool through a runaway
// writer's life: thin volumes overcommit and learn of the full pool only when
// a write needs a new block, snapshots hold their blocks (overwriting one
// needs a new block), space freed meanwhile goes to the filler, a receive is
// refused whole and leaves the replica's previous snapshot intact, and
// everything works again once the filler's dataset is destroyed.
func TestAFillerMakesThePoolFullUntilItStops(t *testing.T) {
	bs := uint64(DefaultBlockSizeBytes)
	source := twoSnapshotSource(t, 2*bs, 3*bs)

	p := New(Options{SizeBytes: 64 * bs, Seed: 2})
	mustDo(t, p.CreateVolume("thin", 1<<20, backend.Thin))
	mustDo(t, write(p, "thin", 0, 2*bs))
	mustDo(t, p.Snapshot("thin", "s"))
	mustDo(t, write(p, "thin", 4*bs, bs))
	mustDo(t, p.Receive("replica", sendOf(t, source, "v", "", "s1")))
	before := allocated(t, p)

	p.Fill()
	if u, _ := p.Usage(); u.FreeBytes != 0 || u.AllocatedBytes != u.SizeBytes {
		t.Fatalf("a filled pool's usage: %+v", u)
	}
	mustDo(t, p.CreateVolume("overcommitted", 1<<30, backend.Thin)) // thin: no space promised
	if err := write(p, "overcommitted", 0, 1); !errors.Is(err, backend.ErrPoolFull) {
		t.Fatalf("a write of a new block to a full pool: %v", err)
	}
	if err := write(p, "thin", 0, 1); !errors.Is(err, backend.ErrPoolFull) {
		t.Fatalf("overwriting a block a snapshot holds needs a new one: %v", err)
	}
	mustDo(t, write(p, "thin", 4*bs, 1)) // a block the head holds alone is overwritten in place
	if err := p.CreateVolume("thick", 1<<20, backend.Thick); !errors.Is(err, backend.ErrPoolFull) {
		t.Fatalf("a thick volume on a full pool: %v", err)
	}
	err := p.Receive("replica", sendOf(t, source, "v", "s1", "s2"))
	if !errors.Is(err, backend.ErrPoolFull) {
		t.Fatalf("a receive into a full pool: %v", err)
	}
	snapshots, _ := p.Snapshots("replica")
	if len(snapshots) != 1 || snapshots[0].Name != "s1" {
		t.Fatalf("a refused receive changed the replica's snapshots: %+v", snapshots)
	}
	// Space freed now goes to the filler, not back to the volumes.
	mustDo(t, p.DestroySnapshot("thin", "s"))
	if err := write(p, "overcommitted", 0, 1); !errors.Is(err, backend.ErrPoolFull) {
		t.Fatalf("a write after a snapshot was destroyed under the filler: %v", err)
	}
	mustDo(t, p.Verify())

	p.Unfill()
	if u, _ := p.Usage(); u.AllocatedBytes != before || u.FreeBytes != u.SizeBytes-before {
		t.Fatalf("usage %+v after the filler's dataset was destroyed; the volumes held %d before it ran", u, before)
	}
	mustDo(t, write(p, "overcommitted", 0, 1))
	mustDo(t, p.Receive("replica", sendOf(t, source, "v", "s1", "s2")))
	mustDo(t, p.Verify())
}
