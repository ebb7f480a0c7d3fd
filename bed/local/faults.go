package local

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
)

// hub is the scoped name of the hub: this process.
const hub = "hub"

// The faults the local bed injects beyond partitions. It degrades no link
// (tc netem in the namespaces would, and this machine's kernel has no netem
// qdisc), fills no pool (its nodes' pools would need a filler dataset beside
// the volumes) and fails no API call (its API servers and storage APIs would
// need a failing proxy in front of them): a scenario that asks for those
// learns it from bed.Can.
var (
	_ bed.NodeCrasher       = (*Bed)(nil)
	_ bed.ControllerCrasher = (*Bed)(nil)
)

// Partition cuts a from b. Between the sites it is a blackhole route in the
// namespace of each side that cuts (the packets are dropped in the kernel);
// between the hub and a site, the hub -- this process, which delivers
// Ramen's wishes -- stops reaching the site until Heal. Nodes are not
// scoped endpoints of the local bed yet: that is recorded as a violation.
func (b *Bed) Partition(a, c string, bothWays bool) {
	b.event(a, reports.EventPartition, "partition %s from %s (both ways: %v)", a, c, bothWays)
	if err := b.cut(a, c, bothWays, true); err != nil {
		b.violate("bed: partition failed", err.Error())
	}
}

// Heal restores every path between a and c.
func (b *Bed) Heal(a, c string) {
	b.event(a, reports.EventPartition, "heal %s and %s", a, c)
	if err := b.cut(a, c, true, false); err != nil {
		b.violate("bed: heal failed", err.Error())
	}
}

// HealAll restores every path.
func (b *Bed) HealAll() {
	b.event("", reports.EventPartition, "heal every partition")
	var errs []error
	for _, x := range SiteNames {
		delete(b.hubCut, x)
		for _, y := range SiteNames {
			if x != y {
				errs = append(errs, b.net.heal(x, y))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		b.violate("bed: heal failed", err.Error())
	}
}

// cut makes (on) or lifts (off) the cut between a and c.
func (b *Bed) cut(a, c string, bothWays, on bool) error {
	endpoints := append([]string{hub}, SiteNames...)
	if !slices.Contains(endpoints, a) || !slices.Contains(endpoints, c) {
		return fmt.Errorf("partition %s from %s: the local bed cuts between %v only; nodes are not on the local bed yet", a, c, endpoints)
	}
	switch {
	case a == c:
		return nil
	case a == hub || c == hub:
		site := a
		if a == hub {
			site = c
		}
		if on {
			b.hubCut[site] = true
		} else {
			delete(b.hubCut, site)
		}
		return nil
	}
	change := b.net.heal
	if on {
		change = b.net.partition
	}
	err := change(a, c)
	if bothWays {
		err = errors.Join(err, change(c, a))
	}
	return err
}

// CrashNode kills the node agent with SIGKILL: a crash of the agent
// process, not of the machine -- its pool stays mounted and its volumes'
// loop devices attached, which the restarted agent adopts.
func (b *Bed) CrashNode(site, node string) {
	s, err := b.site(site)
	if err != nil || node != nodeName {
		b.violate("bed: crash failed", fmt.Sprintf("no node %s on %s", node, site))
		return
	}
	b.event(site, reports.EventFault, "crash %s/%s (SIGKILL to baton-node)", site, node)
	s.node.kill()
}

// RestartNode starts the node agent again and waits until it reports.
func (b *Bed) RestartNode(site, node string) error {
	s, err := b.site(site)
	if err != nil {
		return err
	}
	if node != nodeName {
		return fmt.Errorf("no node %s on %s", node, site)
	}
	if s.node.running() {
		return nil
	}
	b.event(site, reports.EventFault, "restart %s/%s", site, node)
	if s.node, err = s.node.again(); err != nil {
		return err
	}
	metrics := fmt.Sprintf("http://%s:%d/metrics", s.net.ip, nodeMetricsPort)
	return b.waitFor(context.Background(), s.node, site+": "+node+" serves again", func() error {
		response, err := http.Get(metrics)
		if err != nil {
			return err
		}
		return response.Body.Close()
	})
}

// CrashController kills the site's operator with SIGKILL.
func (b *Bed) CrashController(site string) {
	s, err := b.site(site)
	if err != nil {
		b.violate("bed: crash failed", err.Error())
		return
	}
	b.event(site, reports.EventFault, "crash %s's operator (SIGKILL to baton-controller)", site)
	s.controller.kill()
}

// RestartController starts the site's operator again; it serves once it
// has read its records back, which the next calls wait for as they would.
func (b *Bed) RestartController(site string) {
	s, err := b.site(site)
	if err != nil {
		b.violate("bed: restart failed", err.Error())
		return
	}
	if s.controller.running() {
		return
	}
	b.event(site, reports.EventFault, "restart %s's operator", site)
	if s.controller, err = s.controller.again(); err != nil {
		b.violate("bed: restart failed", err.Error())
	}
}
