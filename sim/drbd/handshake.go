package drbd

import (
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// side is what one end brings to a connection's handshake: its data
// generation as seen toward the other end.
type side struct {
	current    uint64
	bitmapUUID uint64   // this side's bitmap UUID for the other side
	ancestors  []uint64 // history and bitmap UUIDs, the generations it descends from
	disk       backend.DiskState
	dirty      bool // this side's bitmap toward the other side is not empty
	crashed    bool
	primary    bool
	// negotiating: the disk was just attached; DRBD refuses a Primary as
	// SyncTarget only when its disk is at least Consistent.
	negotiating bool
}

// outcome is what a handshake decides.
type outcome uint8

const (
	// inSync: nothing to copy.
	inSync outcome = iota
	// resync: the source copies the blocks of both bitmaps.
	resync
	// fullSync: the source copies every block (the target's generation is not
	// one the source has a bitmap for).
	fullSync
	// splitBrain: both sides changed since a common generation. DRBD drops the
	// connection and leaves both StandAlone; nothing is resolved.
	splitBrain
	// unrelated: no common generation at all.
	unrelated
	// targetPrimary: the side that would become SyncTarget is Primary.
	targetPrimary
	// sourceInconsistent: the side that would become SyncSource has no
	// consistent data to give.
	sourceInconsistent
)

func (o outcome) String() string {
	switch o {
	case inSync:
		return "in sync"
	case resync:
		return "resync"
	case fullSync:
		return "full sync"
	case splitBrain:
		return "split brain"
	case unrelated:
		return "unrelated data"
	case targetPrimary:
		return "target is primary"
	case sourceInconsistent:
		return "source is inconsistent"
	}
	return "outcome(?)"
}

// verdict is a handshake's decision; sourceIsA says which side gives data when
// data moves.
type verdict struct {
	outcome   outcome
	sourceIsA bool
}

// decide compares two generations as drbd_uuid_compare does. It is symmetric
// up to naming: decide(b, a) is decide(a, b) with the source flipped, except
// for exact ties, which go to a (callers pass the sides in name order).
func decide(a, b side) verdict {
	v := compareGenerations(a, b)
	if v.outcome != resync && v.outcome != fullSync {
		return v
	}
	source, target := a, b
	if !v.sourceIsA {
		source, target = b, a
	}
	if source.disk == backend.Inconsistent {
		return verdict{outcome: sourceInconsistent, sourceIsA: v.sourceIsA}
	}
	if target.primary && !target.negotiating {
		return verdict{outcome: targetPrimary, sourceIsA: v.sourceIsA}
	}
	return v
}

func compareGenerations(a, b side) verdict {
	switch {
	case a.current == 0 && b.current == 0:
		return verdict{outcome: inSync}
	case a.current == 0:
		if b.disk == backend.Inconsistent {
			return verdict{outcome: inSync}
		}
		return verdict{outcome: fullSync, sourceIsA: false}
	case b.current == 0:
		if a.disk == backend.Inconsistent {
			return verdict{outcome: inSync}
		}
		return verdict{outcome: fullSync, sourceIsA: true}
	case a.current == b.current:
		return compareEqual(a, b)
	case a.bitmapUUID != 0 && a.bitmapUUID == b.current:
		return verdict{outcome: resync, sourceIsA: true}
	case b.bitmapUUID != 0 && b.bitmapUUID == a.current:
		return verdict{outcome: resync, sourceIsA: false}
	case slices.Contains(a.ancestors, b.current):
		return verdict{outcome: fullSync, sourceIsA: true}
	case slices.Contains(b.ancestors, a.current):
		return verdict{outcome: fullSync, sourceIsA: false}
	}
	for _, u := range a.ancestors {
		if slices.Contains(b.ancestors, u) {
			return verdict{outcome: splitBrain}
		}
	}
	return verdict{outcome: unrelated}
}

// compareEqual decides between sides of one generation: only blocks that one
// side may lack move (a transfer log or activity log marked them), and the
// side that certainly has them gives them.
func compareEqual(a, b side) verdict {
	aInc, bInc := a.disk == backend.Inconsistent, b.disk == backend.Inconsistent
	switch {
	case !a.dirty && !b.dirty && !aInc && !bInc:
		return verdict{outcome: inSync}
	case aInc && bInc:
		return verdict{outcome: inSync}
	case aInc != bInc:
		return verdict{outcome: resync, sourceIsA: bInc}
	case a.crashed != b.crashed:
		return verdict{outcome: resync, sourceIsA: b.crashed}
	case a.primary != b.primary:
		return verdict{outcome: resync, sourceIsA: a.primary}
	case a.dirty != b.dirty:
		return verdict{outcome: resync, sourceIsA: a.dirty}
	}
	return verdict{outcome: resync, sourceIsA: true}
}
