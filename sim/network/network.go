// Package network simulates the network between the endpoints of a baton world:
// latency, bandwidth, loss, duplication, reordering and partitions, all drawn
// from the world's seed and scheduled on its clock.
//
// Endpoints are hierarchical names: "hub", "site-a/controller", "site-a/node-1".
// A scope names an endpoint and everything under it: "site-a" (or "site-a/")
// covers "site-a", "site-a/node-1" and "site-a/controller", never "site-ab".
// Links, partitions and slowdowns are set between scopes, so one call cuts a
// whole site off.
//
// # Fault model
//
// What can happen to a message sent with Send:
//   - Loss: with its link's Loss probability, drawn at send time. A lost message
//     has still used its link's bandwidth.
//   - Delay: latency, plus jitter drawn uniformly from [0, Jitter], plus the time
//     its bytes wait behind earlier messages on the same link (each direction of
//     a link is a FIFO pipe of BandwidthBytesPerSecond), plus any SlowLink
//     slowdown in force when it is sent.
//   - Reordering: messages on one link arrive in send order unless jitter or the
//     Reorder knob (an extra delay of up to ReorderDelayMax) lets a later message
//     overtake an earlier one.
//   - Duplication: with Duplicate probability a second copy arrives, after its
//     own flight time.
//   - Partition: one-way (Partition(a, b) stops a's messages to b while b's still
//     reach a) or both ways. A message is dropped if a partition blocks it when
//     it is sent or when it would be delivered: a cut that starts while a message
//     is in flight loses it, as a link that goes down loses what is on the wire.
//     A cut that starts and heals entirely within one message's flight does not
//     touch it: partitions are checked at those two instants only.
//
// What cannot happen:
//   - Corruption: a delivered message is the message sent (the payload is the
//     caller's closure; the network never sees it).
//   - Delivery to anyone but the recipient, before the message's delay has
//     passed, or after the message was dropped.
//   - Time moving on its own: Send schedules on the world, and Call returns the
//     round trip it would take without moving the clock. CallWithin tells a
//     synchronous caller what it waited -- its round trip, or its whole
//     timeout when a partition or a loss left it without an answer -- and the
//     caller accounts for that time.
//   - Endpoint faults: the network knows no endpoint state. A crashed node's
//     model ignores what is delivered to it.
//
// Every fault, heal and drop is a line in the world's event log, and every
// delivery is an event, so the world's hash covers the network's behaviour.
package network

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/baton-dr/baton/sim"
)

// Network carries messages between endpoints of one world.
type Network struct {
	world     *sim.World
	rng       *rand.Rand // the world's "network" stream
	defaults  LinkOptions
	links     []*link         // SetLink entries, in the order first set
	pipes     map[route]*pipe // default links' pipes, one per endpoint pair; only looked up
	cuts      []route         // partitions in force, in the order made
	slowdowns []slowdown      // in force, in the order made
	stats     Stats
}

// Stats counts what Send did with the messages it was given.
type Stats struct {
	Sent        uint64 // messages given to Send
	BytesSent   uint64 // bytes of the messages that left their sender (not partitioned at send)
	Delivered   uint64 // deliveries, duplicates included
	Duplicated  uint64 // extra copies scheduled
	Lost        uint64 // dropped by seeded loss
	Partitioned uint64 // dropped at send: a partition blocked the link
	CutInFlight uint64 // dropped at delivery: a partition started while in flight
}

// New creates a network in which every pair of endpoints without a SetLink
// entry is joined by a link with the default options. Its randomness is the
// world's "network" stream.
func New(w *sim.World, defaults LinkOptions) *Network {
	if err := defaults.Validate(); err != nil {
		panic(fmt.Sprintf("network: default link options: %v", err))
	}
	n := &Network{world: w, rng: w.Rand("network"), defaults: defaults, pipes: map[route]*pipe{}}
	w.Logf("net.new", "default %s", defaults)
	return n
}

// Stats returns the message counts so far.
func (n *Network) Stats() Stats { return n.stats }

// Reachable reports whether a message from one endpoint to another would get
// past the partitions in force now. Components that model synchronous RPCs
// check it (or use Call, which also checks the way back).
func (n *Network) Reachable(from, to string) bool {
	mustBeEndpoint(from)
	mustBeEndpoint(to)
	for _, cut := range n.cuts {
		if cut.covers(from, to) {
			return false
		}
	}
	return true
}

// Send carries a message of sizeBytes from one endpoint to another and runs
// deliver when it arrives, as an event labelled "net.deliver <from>-><to>
// <label>". It may drop, delay, reorder or duplicate the message as the package
// documentation describes; a dropped message is logged and never delivered.
func (n *Network) Send(from, to string, sizeBytes uint64, label string, deliver func()) {
	if label == "" || deliver == nil {
		panic("network: Send needs a label and a delivery")
	}
	n.stats.Sent++
	if !n.Reachable(from, to) {
		n.drop(from, to, label, dropPartitioned)
		return
	}
	o, l := n.options(from, to)
	n.stats.BytesSent += sizeBytes
	sent := n.transmit(n.pipe(l, from, to), sizeBytes, o.BandwidthBytesPerSecond)
	if n.chance(o.Loss) {
		n.drop(from, to, label, dropLost)
		return
	}
	n.deliverAfter(sent+n.flight(o), from, to, label, deliver)
	if n.chance(o.Duplicate) {
		n.stats.Duplicated++
		n.world.Logf("net.duplicate", "%s->%s %s", from, to, label)
		n.deliverAfter(sent+n.flight(o), from, to, label, deliver)
	}
}

func (n *Network) deliverAfter(d time.Duration, from, to, label string, deliver func()) {
	n.world.After(d, "net.deliver "+from+"->"+to+" "+label, func() {
		if !n.Reachable(from, to) {
			n.drop(from, to, label, dropCutInFlight)
			return
		}
		n.stats.Delivered++
		deliver()
	})
}

// Call models a synchronous request and response between two endpoints: it
// returns the round trip the exchange takes (both latencies and jitters; small
// messages, so bandwidth and queueing are ignored), ErrUnreachable when a
// partition blocks either direction, or, by seeded loss, ErrTimeout (the
// request was lost) or ErrResponseLost (the request arrived and was acted on,
// its answer was lost; it matches ErrTimeout too).
//
// Call does not move the clock. The world has one goroutine: moving time here
// would run other events in the middle of the caller's. The caller accounts for
// the round trip, typically by scheduling its continuation After it.
func (n *Network) Call(from, to string) (time.Duration, error) {
	request, response, err := n.legs(from, to)
	return request + response, err
}

// legs draws one exchange's fate and the flights of its request and its
// answer (the request's flight is set when only the answer was lost).
func (n *Network) legs(from, to string) (request, response time.Duration, err error) {
	if !n.Reachable(from, to) || !n.Reachable(to, from) {
		n.world.Logf("net.call", "%s->%s unreachable", from, to)
		return 0, 0, ErrUnreachable
	}
	there, _ := n.options(from, to)
	back, _ := n.options(to, from)
	if n.chance(there.Loss) {
		n.world.Logf("net.call", "%s->%s request lost", from, to)
		return 0, 0, ErrTimeout
	}
	if n.chance(back.Loss) {
		n.world.Logf("net.call", "%s->%s response lost", from, to)
		return there.Latency, 0, ErrResponseLost
	}
	request, response = there.Latency+n.jitter(there), back.Latency+n.jitter(back)
	n.world.Logf("net.call", "%s->%s rtt=%s", from, to, request+response)
	return request, response, nil
}

// Exchange is how one synchronous call went on the wire, as CallWithin
// tells it: the flights of the request and of its answer, and how long the
// caller waited -- the round trip, or its whole timeout when no answer came.
type Exchange struct {
	Request, Response time.Duration
	Waited            time.Duration
	// Arrived: the request reached the callee, which acted on it (its
	// answer may still have been lost: Err is then ErrResponseLost).
	Arrived bool
	Err     error
}

// CallWithin is Call for a caller that waits at most timeout: a partition
// drops the packets silently, so a call across it, or one whose request or
// answer was lost, costs the caller its whole timeout, as a real RPC's
// deadline does; so does a round trip longer than timeout (ErrTimeout, the
// request having arrived). A call that went through waited its round trip.
func (n *Network) CallWithin(from, to string, timeout time.Duration) Exchange {
	if timeout <= 0 {
		panic("network: CallWithin needs a timeout")
	}
	request, response, err := n.legs(from, to)
	switch {
	case errors.Is(err, ErrResponseLost):
		return Exchange{Request: request, Waited: timeout, Arrived: true, Err: err}
	case err != nil:
		return Exchange{Waited: timeout, Err: err}
	case request+response > timeout:
		return Exchange{Request: request, Waited: timeout, Arrived: request <= timeout, Err: ErrTimeout}
	}
	return Exchange{Request: request, Response: response, Waited: request + response, Arrived: true}
}

// Describe lists the network's knobs and the faults in force, one per line,
// in the order they were set.
func (n *Network) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "net.default=%s\n", n.defaults)
	for _, l := range n.links {
		fmt.Fprintf(&b, "net.link=%s %s\n", l.route, l.options)
	}
	for _, cut := range n.cuts {
		fmt.Fprintf(&b, "net.partition=%s\n", cut)
	}
	for _, s := range n.slowdowns {
		fmt.Fprintf(&b, "net.slow=%s %s\n", s.route, s.Slowdown)
	}
	return b.String()
}

// dropReason says why a message was not delivered.
type dropReason uint8

const (
	// dropPartitioned: a partition blocked the link when the message was sent.
	dropPartitioned dropReason = iota
	// dropLost: seeded loss.
	dropLost
	// dropCutInFlight: a partition blocked the link when the message arrived.
	dropCutInFlight
)

func (r dropReason) String() string {
	switch r {
	case dropPartitioned:
		return "partitioned"
	case dropLost:
		return "lost"
	case dropCutInFlight:
		return "cut-in-flight"
	}
	return fmt.Sprintf("dropReason(%d)", r)
}

func (n *Network) drop(from, to, label string, reason dropReason) {
	switch reason {
	case dropPartitioned:
		n.stats.Partitioned++
	case dropLost:
		n.stats.Lost++
	case dropCutInFlight:
		n.stats.CutInFlight++
	default:
		panic(fmt.Sprintf("network: unknown %s", reason))
	}
	n.world.Logf("net.drop", "%s->%s %s reason=%s", from, to, label, reason)
}

// chance draws from the stream only for a non-zero probability, so a knob left
// at zero costs no randomness and leaves the stream as it was.
func (n *Network) chance(probability float64) bool {
	return probability > 0 && n.rng.Float64() < probability
}

func (n *Network) jitter(o LinkOptions) time.Duration {
	if o.Jitter <= 0 {
		return 0
	}
	return time.Duration(n.rng.Int64N(int64(o.Jitter) + 1))
}

// flight is the time from the last byte leaving to the message arriving.
func (n *Network) flight(o LinkOptions) time.Duration {
	d := o.Latency + n.jitter(o)
	if n.chance(o.Reorder) {
		d += 1 + time.Duration(n.rng.Int64N(int64(o.ReorderDelayMax)))
	}
	return d
}
