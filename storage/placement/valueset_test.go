package placement

import (
	"math/rand/v2"
	"testing"
)

func TestValueSetLowestFree(t *testing.T) {
	s := newValueSet(1 << 16)
	for v := range uint32(10000) {
		s.add(v)
	}
	s.add(10001)
	tests := []struct {
		first, last uint32
		want        uint32
		ok          bool
	}{
		{0, 65535, 10000, true},
		{9999, 9999, 0, false},
		{10001, 10001, 0, false},
		{10001, 10002, 10002, true},
		{10, 10000, 10000, true},
		{20000, 20000, 20000, true},
		{65535, 65535, 65535, true},
		{65536, 70000, 0, false}, // beyond the set
		{30, 20, 0, false},       // inverted
	}
	for _, tt := range tests {
		got, ok := s.lowestFree(tt.first, tt.last)
		if got != tt.want || ok != tt.ok {
			t.Errorf("lowestFree(%d, %d) = %d, %v; want %d, %v", tt.first, tt.last, got, ok, tt.want, tt.ok)
		}
	}
	s.add(10000) // shared users: a value stays used until its last user leaves
	s.add(10000)
	s.remove(10000)
	if got, _ := s.lowestFree(0, 65535); got != 10002 {
		t.Errorf("with a user left on 10000: lowestFree = %d, want 10002", got)
	}
	s.remove(10000)
	s.remove(5000)
	if got, _ := s.lowestFree(0, 65535); got != 5000 {
		t.Errorf("after freeing 5000: lowestFree = %d, want 5000", got)
	}
}

func TestValueSetFullSetHasNoFreeValue(t *testing.T) {
	s := newValueSet(4096)
	for v := range uint32(4096) {
		s.add(v)
	}
	if v, ok := s.lowestFree(0, 4095); ok {
		t.Errorf("full set: lowestFree = %d, want none", v)
	}
	s.remove(4095)
	if v, ok := s.lowestFree(0, 4095); !ok || v != 4095 {
		t.Errorf("last value freed: lowestFree = %d, %v; want 4095", v, ok)
	}
}

// The bitmap against a linear scan, over random adds and removes in a small
// window of a large set, so that words and summary words fill and drain.
func TestValueSetMatchesLinearScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	s := newValueSet(1 << 16)
	users := map[uint32]int{}
	for step := range 20000 {
		v := uint32(rng.IntN(9000))
		if users[v] > 0 && rng.IntN(2) == 0 {
			s.remove(v)
			users[v]--
		} else {
			s.add(v)
			users[v]++
		}
		first := uint32(rng.IntN(9000))
		last := first + uint32(rng.IntN(9000))
		want, wantOK := uint32(0), false
		for x := first; x <= last; x++ {
			if users[x] == 0 {
				want, wantOK = x, true
				break
			}
		}
		if got, ok := s.lowestFree(first, last); got != want || ok != wantOK {
			t.Fatalf("step %d: lowestFree(%d, %d) = %d, %v; linear scan says %d, %v", step, first, last, got, ok, want, wantOK)
		}
	}
}
