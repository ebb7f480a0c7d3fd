package bed

import "testing"

// A workload model's random source depends on the bed's seed, the model's
// name and how many applications came before it, and on nothing else: the
// same three replay the same draws.
func TestWallClockRandReplaysFromSeedNameAndOrder(t *testing.T) {
	deployed := 0
	c := WallClock{Seed: 42, Deployed: func() int { return deployed }}
	draws := func(c WallClock, name string) [4]uint64 {
		r := c.Rand(name)
		return [4]uint64{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()}
	}
	first := draws(c, "wp")
	if again := draws(c, "wp"); again != first {
		t.Fatalf("the same seed, name and order drew %v, then %v", first, again)
	}
	if other := draws(WallClock{Seed: 43, Deployed: c.Deployed}, "wp"); other == first {
		t.Error("another seed drew the same operations")
	}
	if other := draws(c, "gitea"); other == first {
		t.Error("a name of another length drew the same operations")
	}
	deployed = 1
	if other := draws(c, "wp"); other == first {
		t.Error("the second application deployed drew the first's operations")
	}
}
