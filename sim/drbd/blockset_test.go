package drbd

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBlockSetAgainstNaive drives the bitmap and a plain map with the same
// random operations and compares them after each.
func TestBlockSetAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s, other blockSet
	naive, naiveOther := map[uint64]bool{}, map[uint64]bool{}
	for step := range 5000 {
		block := rng.Uint64N(700)
		switch rng.IntN(5) {
		case 0, 1:
			s.set(block)
			naive[block] = true
		case 2:
			s.clear(block)
			delete(naive, block)
		case 3:
			other.set(block)
			naiveOther[block] = true
		case 4:
			s.union(&other)
			for b := range naiveOther {
				naive[b] = true
			}
		}
		if s.count != uint64(len(naive)) {
			t.Fatalf("step %d: count %d, want %d", step, s.count, len(naive))
		}
		if s.has(block) != naive[block] {
			t.Fatalf("step %d: has(%d) = %t", step, block, s.has(block))
		}
	}
	var got []uint64
	for b, ok := s.next(0); ok; b, ok = s.next(b + 1) {
		got = append(got, b)
	}
	var want []uint64
	for b := range naive {
		want = append(want, b)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("iteration gives %d blocks, want %d in order", len(got), len(want))
	}
}

func TestBlockSpans(t *testing.T) {
	tests := []struct {
		offset              int64
		length              int
		first, n            uint64
		coveredFirst, cover uint64
	}{
		{0, 4096, 0, 1, 0, 1},
		{0, 1, 0, 1, 1, 0},
		{4095, 2, 0, 2, 1, 0},
		{512, 8192, 0, 3, 1, 1},
		{8192, 12288, 2, 3, 2, 3},
		{100, 0, 0, 0, 1, 0},
	}
	for _, tc := range tests {
		first, n := blockSpan(tc.offset, tc.length)
		if first != tc.first || n != tc.n {
			t.Errorf("blockSpan(%d, %d) = %d+%d, want %d+%d", tc.offset, tc.length, first, n, tc.first, tc.n)
		}
		cf, cn := coveredSpan(tc.offset, tc.length)
		if cn != tc.cover || (cn > 0 && cf != tc.coveredFirst) {
			t.Errorf("coveredSpan(%d, %d) = %d+%d, want %d+%d", tc.offset, tc.length, cf, cn, tc.coveredFirst, tc.cover)
		}
	}
}
