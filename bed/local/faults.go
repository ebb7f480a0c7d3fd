package local

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// hub is the scoped name of the hub: this process.
const hub = "hub"

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

// Degrade is not on the local bed yet: tc netem in the namespaces would do
// it, and this machine's kernel has no netem qdisc. Recorded as a violation.
func (b *Bed) Degrade(d bed.Degradation) { b.notHere("degrading the sites' link") }

// Restore has nothing to restore while Degrade is not on the local bed.
func (b *Bed) Restore() {}

// FillPool is not on the local bed yet: its nodes' pools would need a filler
// dataset beside the volumes.
func (b *Bed) FillPool(site, node string) { b.notHere("filling a node's pool") }

// FreePool has nothing to free while FillPool is not on the local bed.
func (b *Bed) FreePool(site, node string) {}

// FailAPI is not on the local bed yet: its API servers and storage APIs would
// need a failing proxy in front of them.
func (b *Bed) FailAPI(endpoint string, rate float64) { b.notHere("failing the APIs' calls") }

// HealAPI has nothing to heal while FailAPI is not on the local bed.
func (b *Bed) HealAPI(endpoint string) {}

// FailStore is not on the local bed yet: its operators' API servers would
// need a proxy that fails writes. Recorded as a violation.
func (b *Bed) FailStore(site string, rate float64) { b.notHere("failing a site's record store") }

// HealStore has nothing to heal while FailStore is not on the local bed.
func (b *Bed) HealStore(site string) {}

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

// errNotHere answers what the local bed does not do yet.
func errNotHere(what string) error { return fmt.Errorf("%s is not on the local bed yet", what) }

// Drill is not on the local bed yet.
func (b *Bed) Drill(app, site string) (workload.Verdict, error) {
	return workload.Verdict{}, errNotHere("a test fail-over (drill)")
}

// RequestStorage is not on the local bed yet: it has no hub API server.
func (b *Bed) RequestStorage(r bed.StorageRequest) error {
	return errNotHere("the hub's storage requests")
}

// RequestedStorage is not on the local bed yet.
func (b *Bed) RequestedStorage(site string) (bed.Storage, error) {
	return bed.Storage{}, errNotHere("the hub's storage requests")
}

// WithdrawStorage is not on the local bed yet.
func (b *Bed) WithdrawStorage(site string) error { return errNotHere("the hub's storage requests") }

// SiteStorage is not on the local bed yet.
func (b *Bed) SiteStorage(site string) (bed.Storage, error) {
	return bed.Storage{}, errNotHere("reading a site's storage for the hub scenarios")
}
