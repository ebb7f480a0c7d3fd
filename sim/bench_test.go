package sim

import (
	"testing"
	"time"
)

// BenchmarkSchedulerEvents measures the kernel's throughput: each event logs
// itself into the hash and schedules a successor at a random delay, with a
// thousand events pending (the heap's depth in a busy bed).
func BenchmarkSchedulerEvents(b *testing.B) {
	w := NewWorld(1, WithEventBudget(1<<62))
	r := w.Rand("bench")
	var tick func()
	tick = func() { w.After(time.Duration(r.IntN(1000))*time.Millisecond, "tick", tick) }
	for range 1000 {
		w.After(time.Duration(r.IntN(1000))*time.Millisecond, "tick", tick)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
