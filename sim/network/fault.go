package network

import (
	"fmt"
	"strings"
	"time"
)

// Partition stops messages from scope a to scope b (one way): every endpoint
// under a loses its way to every endpoint under b. b can still reach a.
func (n *Network) Partition(a, b string) {
	r := route{from: scope(a), to: scope(b)}
	n.cut(r)
	n.world.Logf("net.partition", "%s", r)
}

// PartitionBoth stops messages between scopes a and b in both directions.
func (n *Network) PartitionBoth(a, b string) {
	a, b = scope(a), scope(b)
	n.cut(route{from: a, to: b})
	n.cut(route{from: b, to: a})
	n.world.Logf("net.partition", "%s<->%s", a, b)
}

// Isolate partitions every scope of group from every scope of rest, both ways;
// e.g. Isolate({"site-a"}, {"site-b", "hub"}) cuts site A off. The groups must
// not overlap: a scope on both sides is a mistake in the fault schedule.
func (n *Network) Isolate(group, rest []string) {
	if len(group) == 0 || len(rest) == 0 {
		panic("network: Isolate needs two non-empty groups")
	}
	for _, g := range group {
		for _, r := range rest {
			g, r := scope(g), scope(r)
			if covers(g, r) || covers(r, g) {
				panic(fmt.Sprintf("network: Isolate: %q and %q overlap", g, r))
			}
			n.cut(route{from: g, to: r})
			n.cut(route{from: r, to: g})
		}
	}
	n.world.Logf("net.isolate", "%s from %s", strings.Join(group, ","), strings.Join(rest, ","))
}

func (n *Network) cut(r route) {
	for _, existing := range n.cuts {
		if existing == r {
			return
		}
	}
	n.cuts = append(n.cuts, r)
}

// Slowdown degrades a link while it is in force.
type Slowdown struct {
	// ExtraLatency is added to every message's delay.
	ExtraLatency time.Duration
	// BandwidthBytesPerSecond caps the link's bandwidth; 0 leaves it.
	BandwidthBytesPerSecond uint64
}

func (s Slowdown) String() string {
	return fmt.Sprintf("extra-latency=%s bandwidth-cap=%dB/s", s.ExtraLatency, s.BandwidthBytesPerSecond)
}

type slowdown struct {
	route
	Slowdown
}

func (s slowdown) apply(o LinkOptions) LinkOptions {
	o.Latency += s.ExtraLatency
	if s.BandwidthBytesPerSecond > 0 && (o.BandwidthBytesPerSecond == 0 || s.BandwidthBytesPerSecond < o.BandwidthBytesPerSecond) {
		o.BandwidthBytesPerSecond = s.BandwidthBytesPerSecond
	}
	return o
}

// SlowLink degrades the links between scopes a and b in both directions until
// Heal or HealAll. Slowdowns add up: their latencies sum, the lowest cap holds.
func (n *Network) SlowLink(a, b string, s Slowdown) {
	if s.ExtraLatency < 0 {
		panic(fmt.Sprintf("network: SlowLink %s<->%s: negative extra latency %s", a, b, s.ExtraLatency))
	}
	a, b = scope(a), scope(b)
	n.slowdowns = append(n.slowdowns, slowdown{route{from: a, to: b}, s}, slowdown{route{from: b, to: a}, s})
	n.world.Logf("net.slow", "%s<->%s %s", a, b, s)
}

// Heal removes, in both directions, every partition and slowdown that lies
// between scopes a and b: healing two sites also heals cuts between their
// nodes. It cannot carve a hole in a wider fault: after PartitionBoth("site-a",
// "site-b"), Heal("site-a/node-1", "site-b") leaves the whole cut in place.
func (n *Network) Heal(a, b string) {
	a, b = scope(a), scope(b)
	before := len(n.cuts) + len(n.slowdowns)
	n.cuts = deleteWithin(n.cuts, a, b, func(r route) route { return r })
	n.slowdowns = deleteWithin(n.slowdowns, a, b, func(s slowdown) route { return s.route })
	n.world.Logf("net.heal", "%s<->%s faults=%d", a, b, before-len(n.cuts)-len(n.slowdowns))
}

// ClearSlowdowns removes the slowdowns between the scopes of a and b and
// leaves their partitions in force.
func (n *Network) ClearSlowdowns(a, b string) {
	a, b = scope(a), scope(b)
	before := len(n.slowdowns)
	n.slowdowns = deleteWithin(n.slowdowns, a, b, func(s slowdown) route { return s.route })
	n.world.Logf("net.unslow", "%s<->%s slowdowns=%d", a, b, before-len(n.slowdowns))
}

func deleteWithin[T any](faults []T, a, b string, routeOf func(T) route) []T {
	kept := faults[:0]
	for _, f := range faults {
		if !routeOf(f).within(a, b) {
			kept = append(kept, f)
		}
	}
	clear(faults[len(kept):])
	return kept
}

// HealAll removes every partition and slowdown, as the liveness phase of a run
// does before it waits for the system to converge.
func (n *Network) HealAll() {
	healed := len(n.cuts) + len(n.slowdowns)
	n.cuts, n.slowdowns = nil, nil
	n.world.Logf("net.heal-all", "faults=%d", healed)
}

// covers reports whether a scope is the endpoint (or scope) name or one of its
// ancestors: "site-a" covers "site-a/node-1", not "site-ab".
func covers(scope, name string) bool {
	return strings.HasPrefix(name, scope) && (len(name) == len(scope) || name[len(scope)] == '/')
}

// scope checks a scope name and drops the trailing "/" of the prefix form.
func scope(name string) string {
	trimmed := strings.TrimSuffix(name, "/")
	if trimmed == "" || strings.ContainsAny(name, " \t\r\n") {
		panic(fmt.Sprintf("network: %q is not a scope", name))
	}
	return trimmed
}

func mustBeEndpoint(name string) {
	if name == "" || strings.HasSuffix(name, "/") || strings.ContainsAny(name, " \t\r\n") {
		panic(fmt.Sprintf("network: %q is not an endpoint name", name))
	}
}
