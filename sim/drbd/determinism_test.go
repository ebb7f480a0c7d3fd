package drbd

import (
	"slices"
	"strings"
	"testing"
)

// scenario drives a three-node site through partitions, writes, a crash and
// heals, and returns the event log.
func scenario(t *testing.T) []string {
	site := newSimSite(t, 3, func(o *Options) { o.ResyncBytesPerSecond = 1 << 20; o.ResyncChunkBytes = 64 << 10 })
	res := newSimResource(t, site, "r0", 3)
	res.start()
	res.must(res.r[0].Primary("r0", false))
	for i := range 8 {
		res.write(0, int64(i)*40960, fill(byte(i), 6000), i%3 == 0)
	}
	site.Partition("node-0", "node-2")
	for i := range 16 {
		res.write(0, int64(i)*131072, fill(byte(100+i), 4096), true)
	}
	site.cluster.Crash("node-1")
	site.Pass(250 * 1e6)
	site.Heal("node-0", "node-2")
	site.Pass(1e9)
	site.cluster.Restart("node-1")
	res.rejoin(1)
	return site.sched.log
}

func TestDeterminism(t *testing.T) {
	first, second := scenario(t), scenario(t)
	if !slices.Equal(first, second) {
		for i := range min(len(first), len(second)) {
			if first[i] != second[i] {
				t.Fatalf("runs differ at event %d:\n%s\n%s", i, first[i], second[i])
			}
		}
		t.Fatalf("runs differ in length: %d and %d events", len(first), len(second))
	}
	log := strings.Join(first, "\n")
	for _, want := range []string{"weak", "resync (bitmap)", "resync done", "crash", "new current UUID"} {
		if !strings.Contains(log, want) {
			t.Errorf("the scenario's log never says %q; it does not exercise what it claims", want)
		}
	}
}
