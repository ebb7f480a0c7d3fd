package drbd

import (
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

func TestDecide(t *testing.T) {
	const u0, u1, u2, u3 = 0x10, 0x20, 0x30, 0x40
	up, out, inc := backend.UpToDate, backend.Outdated, backend.Inconsistent
	tests := []struct {
		name string
		a, b side
		want verdict
	}{
		{"both just created", side{disk: inc}, side{disk: inc}, verdict{outcome: inSync}},
		{"fresh peer of a forced primary gets a full sync",
			side{current: u1, disk: up}, side{disk: inc}, verdict{outcome: fullSync, sourceIsA: true}},
		{"fresh side and an inconsistent one: nothing to give",
			side{disk: inc}, side{current: u1, disk: inc}, verdict{outcome: inSync}},
		{"same generation, clean", side{current: u1, disk: up}, side{current: u1, disk: out}, verdict{outcome: inSync}},
		{"same generation, interrupted resync resumes from the consistent side",
			side{current: u1, disk: inc, dirty: true}, side{current: u1, disk: up, dirty: true}, verdict{outcome: resync, sourceIsA: false}},
		{"same generation, crashed side receives",
			side{current: u1, disk: up, dirty: true, crashed: true}, side{current: u1, disk: up}, verdict{outcome: resync, sourceIsA: false}},
		{"same generation, primary gives its transfer log",
			side{current: u1, disk: up}, side{current: u1, disk: up, dirty: true, primary: true}, verdict{outcome: resync, sourceIsA: false}},
		{"same generation, the dirty side gives",
			side{current: u1, disk: up, dirty: true}, side{current: u1, disk: up}, verdict{outcome: resync, sourceIsA: true}},
		{"a changed since b left: bitmap resync from a",
			side{current: u1, bitmapUUID: u0, ancestors: []uint64{u0}, disk: up}, side{current: u0, disk: up},
			verdict{outcome: resync, sourceIsA: true}},
		{"b changed since a left: bitmap resync from b",
			side{current: u0, disk: out}, side{current: u1, bitmapUUID: u0, ancestors: []uint64{u0}, disk: up},
			verdict{outcome: resync, sourceIsA: false}},
		{"b's generation only in a's history: full sync from a",
			side{current: u2, ancestors: []uint64{u1, u0}, disk: up}, side{current: u0, disk: up},
			verdict{outcome: fullSync, sourceIsA: true}},
		{"both changed since a common generation: split brain",
			side{current: u1, bitmapUUID: u0, ancestors: []uint64{u0}, disk: up},
			side{current: u2, bitmapUUID: u0, ancestors: []uint64{u0}, disk: up}, verdict{outcome: splitBrain}},
		{"split brain seen through history alone",
			side{current: u2, ancestors: []uint64{u1}, disk: up}, side{current: u3, ancestors: []uint64{u1}, disk: up},
			verdict{outcome: splitBrain}},
		{"no common generation: unrelated",
			side{current: u1, ancestors: []uint64{u0}, disk: up}, side{current: u3, ancestors: []uint64{u2}, disk: up},
			verdict{outcome: unrelated}},
		{"a primary never becomes SyncTarget",
			side{current: u0, disk: up, primary: true}, side{current: u1, bitmapUUID: u0, ancestors: []uint64{u0}, disk: up},
			verdict{outcome: targetPrimary, sourceIsA: false}},
		{"an inconsistent source gives nothing",
			side{current: u1, bitmapUUID: u0, ancestors: []uint64{u0}, disk: inc}, side{current: u0, disk: up},
			verdict{outcome: sourceInconsistent, sourceIsA: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.a, tc.b); got != tc.want {
				t.Errorf("decide = %v from a=%t, want %v from a=%t", got.outcome, got.sourceIsA, tc.want.outcome, tc.want.sourceIsA)
			}
			// Swapping the sides swaps the source and nothing else.
			flipped := decide(tc.b, tc.a)
			if flipped.outcome != tc.want.outcome ||
				(moves(tc.want.outcome) && flipped.sourceIsA == tc.want.sourceIsA && !tie(tc.a, tc.b)) {
				t.Errorf("decide(b, a) = %v from a=%t, not the mirror of %v", flipped.outcome, flipped.sourceIsA, tc.want.outcome)
			}
		})
	}
}

func moves(o outcome) bool {
	return o == resync || o == fullSync || o == targetPrimary || o == sourceInconsistent
}

// tie: sides that only their order tells apart.
func tie(a, b side) bool {
	return a.current == b.current && a.disk == b.disk && a.dirty == b.dirty && a.crashed == b.crashed && a.primary == b.primary
}
