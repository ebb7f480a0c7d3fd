package network

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/sim"
)

// BenchmarkSend measures messages per second through Send and delivery on a
// WAN link with jitter, loss and bandwidth, with a partition in force elsewhere
// (so Reachable scans a cut), in batches of a thousand in flight.
func BenchmarkSend(b *testing.B) {
	w := sim.NewWorld(1, sim.WithEventBudget(1<<62))
	n := New(w, LinkOptions{Latency: time.Millisecond})
	n.SetLinkBoth("site-a", "site-b", LinkOptions{Latency: 30 * time.Millisecond, Jitter: 5 * time.Millisecond,
		Loss: 0.01, BandwidthBytesPerSecond: 1 << 30})
	n.Partition("hub", "site-a")
	deliver := func() {}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		n.Send("site-a/node-1", "site-b/node-1", 4096, "bench", deliver)
		if i%1000 == 999 {
			w.RunFor(time.Second)
		}
	}
	w.RunFor(time.Minute)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
