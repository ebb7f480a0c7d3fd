package sim

import (
	"slices"
	"testing"
)

func draw(w *World, stream string, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = w.Rand(stream).Uint64()
	}
	return out
}

func TestRandStreamsAreIndependent(t *testing.T) {
	quiet := NewWorld(42)
	alone := draw(quiet, "b", 10)

	busy := NewWorld(42)
	draw(busy, "a", 1000)
	draw(busy, "c", 3)
	busyB := draw(busy, "b", 5)
	draw(busy, "a", 7) // interleaving another stream does not shift b
	busyB = append(busyB, draw(busy, "b", 5)...)
	if !slices.Equal(alone, busyB) {
		t.Fatalf("stream b depends on stream a:\n%v\n%v", alone, busyB)
	}
	if slices.Equal(alone, draw(NewWorld(42), "a", 10)) {
		t.Fatal("streams a and b of one seed are equal")
	}
	if slices.Equal(alone, draw(NewWorld(43), "b", 10)) {
		t.Fatal("stream b of seeds 42 and 43 are equal")
	}
	if !slices.Equal(alone, draw(NewWorld(42), "b", 10)) {
		t.Fatal("stream b of seed 42 differs between worlds")
	}
}
