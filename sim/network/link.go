package network

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
)

// LinkOptions describe one direction of a link.
type LinkOptions struct {
	// Latency is the one-way delay of every message.
	Latency time.Duration
	// Jitter adds a delay drawn uniformly from [0, Jitter] to each message.
	Jitter time.Duration
	// Loss is the probability that a message is lost, in [0, 1].
	Loss float64
	// BandwidthBytesPerSecond is the link's capacity; 0 means unlimited. A
	// message of n bytes occupies the link for n/bandwidth, and messages queue
	// behind each other in send order.
	BandwidthBytesPerSecond uint64
	// Duplicate is the probability that a message arrives twice, in [0, 1].
	Duplicate float64
	// Reorder is the probability that a message is held back by an extra delay
	// drawn uniformly from (0, ReorderDelayMax], so that later ones overtake it.
	Reorder         float64
	ReorderDelayMax time.Duration
}

// Validate reports every knob that is out of range.
func (o LinkOptions) Validate() error {
	var errs []error
	if o.Latency < 0 || o.Jitter < 0 || o.ReorderDelayMax < 0 {
		errs = append(errs, fmt.Errorf("negative delay: latency %s, jitter %s, reorder delay %s",
			o.Latency, o.Jitter, o.ReorderDelayMax))
	}
	for _, p := range []struct {
		name  string
		value float64
	}{{"loss", o.Loss}, {"duplicate", o.Duplicate}, {"reorder", o.Reorder}} {
		if !(p.value >= 0 && p.value <= 1) { // NaN fails both comparisons
			errs = append(errs, fmt.Errorf("%s probability %v is outside [0, 1]", p.name, p.value))
		}
	}
	if o.Reorder > 0 && o.ReorderDelayMax <= 0 {
		errs = append(errs, errors.New("reorder needs a positive ReorderDelayMax to hold messages back by"))
	}
	return errors.Join(errs...)
}

func (o LinkOptions) String() string {
	bandwidth := "unlimited"
	if o.BandwidthBytesPerSecond > 0 {
		bandwidth = fmt.Sprintf("%dB/s", o.BandwidthBytesPerSecond)
	}
	return fmt.Sprintf("latency=%s jitter=%s loss=%g bandwidth=%s duplicate=%g reorder=%g/%s",
		o.Latency, o.Jitter, o.Loss, bandwidth, o.Duplicate, o.Reorder, o.ReorderDelayMax)
}

// route is a directed pair of scopes (or endpoints).
type route struct{ from, to string }

func (r route) String() string { return r.from + "->" + r.to }

// covers reports whether a message from one endpoint to another travels this route.
func (r route) covers(from, to string) bool { return covers(r.from, from) && covers(r.to, to) }

// within reports whether this route lies inside the pair of scopes a, b in
// either direction: Heal(a, b) removes such faults.
func (r route) within(a, b string) bool {
	return (covers(a, r.from) && covers(b, r.to)) || (covers(b, r.from) && covers(a, r.to))
}

// link is a SetLink entry. All messages between the endpoints its route covers
// share its pipe: a link set between two sites is their one WAN pipe.
type link struct {
	route
	options LinkOptions
	pipe    pipe
}

// pipe is one direction's bandwidth queue.
type pipe struct {
	busyUntil time.Duration // simulated time since the epoch when the last queued byte leaves
}

// SetLink sets the options of the link from scope a to scope b (one direction).
// A message takes the entry whose sender scope is narrowest, then whose
// receiver scope is; without one, the defaults and a pipe of its own pair.
func (n *Network) SetLink(a, b string, o LinkOptions) {
	if err := o.Validate(); err != nil {
		panic(fmt.Sprintf("network: link %s->%s: %v", a, b, err))
	}
	r := route{from: scope(a), to: scope(b)}
	n.world.Logf("net.link", "%s %s", r, o)
	for _, l := range n.links {
		if l.route == r {
			l.options = o // the queue already on the wire stays
			return
		}
	}
	n.links = append(n.links, &link{route: r, options: o})
}

// SetLinkBoth sets the options of both directions between scopes a and b.
func (n *Network) SetLinkBoth(a, b string, o LinkOptions) {
	n.SetLink(a, b, o)
	n.SetLink(b, a, o)
}

// options resolves the link between two endpoints, with slowdowns applied. The
// link is nil when the defaults apply.
func (n *Network) options(from, to string) (LinkOptions, *link) {
	var best *link
	for _, l := range n.links {
		if l.covers(from, to) && (best == nil || narrower(l.route, best.route)) {
			best = l
		}
	}
	o := n.defaults
	if best != nil {
		o = best.options
	}
	for _, s := range n.slowdowns {
		if s.covers(from, to) {
			o = s.apply(o)
		}
	}
	return o, best
}

// narrower orders two routes that both cover a message: scopes that cover one
// endpoint are nested, so the longer name is the narrower scope.
func narrower(a, b route) bool {
	if len(a.from) != len(b.from) {
		return len(a.from) > len(b.from)
	}
	return len(a.to) > len(b.to)
}

func (n *Network) pipe(l *link, from, to string) *pipe {
	if l != nil {
		return &l.pipe
	}
	r := route{from: from, to: to}
	p, ok := n.pipes[r]
	if !ok {
		p = &pipe{}
		n.pipes[r] = p
	}
	return p
}

// transmit queues sizeBytes on a pipe and returns how long until its last byte
// has left: the wait behind earlier messages plus its own transmission time.
func (n *Network) transmit(p *pipe, sizeBytes, bandwidthBytesPerSecond uint64) time.Duration {
	now := n.world.Elapsed()
	start := max(now, p.busyUntil)
	p.busyUntil = start + transmissionTime(sizeBytes, bandwidthBytesPerSecond)
	if p.busyUntil < start {
		panic(fmt.Sprintf("network: %d bytes overflow the simulated clock", sizeBytes))
	}
	return p.busyUntil - now
}

// transmissionTime is sizeBytes/bandwidth, rounded up to the nanosecond, in
// 128-bit arithmetic so that large streams on slow links cannot overflow.
func transmissionTime(sizeBytes, bandwidthBytesPerSecond uint64) time.Duration {
	if bandwidthBytesPerSecond == 0 || sizeBytes == 0 {
		return 0
	}
	hi, lo := bits.Mul64(sizeBytes, uint64(time.Second))
	if hi >= bandwidthBytesPerSecond {
		panic(fmt.Sprintf("network: %d bytes at %d B/s take longer than the clock can count", sizeBytes, bandwidthBytesPerSecond))
	}
	nanos, remainder := bits.Div64(hi, lo, bandwidthBytesPerSecond)
	if remainder > 0 {
		nanos++
	}
	if nanos > math.MaxInt64 {
		panic(fmt.Sprintf("network: %d bytes at %d B/s take longer than the clock can count", sizeBytes, bandwidthBytesPerSecond))
	}
	return time.Duration(nanos)
}
