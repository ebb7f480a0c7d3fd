package sim

import (
	"math/rand/v2"
	"time"

	"github.com/baton-dr/baton/sim/network"
)

// What a seed varies of a world besides its faults, so that a sweep explores
// rather than replaying one run with other hashes: the sites' link (latency
// and bandwidth), the replication interval, the phase of every loop (the
// controllers' ticks, the node agents' reconciles, the csi-addons
// controllers), the timing of the applications' writes, and the node a pod
// is scheduled on (reschedule.go). Each is drawn from the seed's
// "bed/variation" stream, or the scheduler's, and logged up front; an option
// the caller set is kept as it is.
const (
	// replicationIntervalMin and Max bound a seed's replication interval.
	replicationIntervalMin = 40 * time.Second
	replicationIntervalMax = 90 * time.Second
	// linkLatencyMin and Max bound the sites' one-way latency; the bandwidth
	// is drawn between linkBandwidthMin and Max.
	linkLatencyMin   = 2 * time.Millisecond
	linkLatencyMax   = 80 * time.Millisecond
	linkBandwidthMin = 20 << 20
	linkBandwidthMax = 200 << 20
)

// vary draws what the caller left unset of the options that a seed varies.
func vary(o Options, rng *rand.Rand) Options {
	if o.ReplicationInterval == 0 {
		o.ReplicationInterval = between(rng, replicationIntervalMin, replicationIntervalMax).Round(time.Second)
	}
	if o.SiteLink == (network.LinkOptions{}) {
		o.SiteLink = network.LinkOptions{
			Latency:                 between(rng, linkLatencyMin, linkLatencyMax).Round(time.Millisecond),
			BandwidthBytesPerSecond: linkBandwidthMin + rng.Uint64N(linkBandwidthMax-linkBandwidthMin),
		}
	}
	return o
}

// between draws a duration in [low, high).
func between(rng *rand.Rand, low, high time.Duration) time.Duration {
	return low + time.Duration(rng.Int64N(int64(high-low)))
}

// everyPhased schedules f at each period, the first time after a phase drawn
// from (0, period]: the loops of a world do not all tick together.
func (w *World) everyPhased(period time.Duration, label string, f func()) {
	phase := time.Duration(1 + w.variation.Int64N(int64(period)))
	w.Sim.After(phase, label, func() {
		f()
		w.every(period, label, f)
	})
}

// everyAbout schedules f about every period, each wait drawn from
// [period/2, 3·period/2): the applications' writes come at uneven times.
func (w *World) everyAbout(period time.Duration, label string, f func()) {
	var tick func()
	tick = func() {
		f()
		w.Sim.After(between(w.variation, period/2, period*3/2), label, tick)
	}
	w.Sim.After(between(w.variation, period/2, period*3/2), label, tick)
}
