package local

import (
	"errors"
	"fmt"
	"slices"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios/workload"
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

// Degrade is not on the local bed yet (tc netem in the namespaces would do
// it): recorded as a violation.
func (b *Bed) Degrade(d bed.Degradation) { b.notHere("degrading the sites' link") }

// Restore has nothing to restore while Degrade is not on the local bed.
func (b *Bed) Restore() {}

// CrashNode is not on the local bed yet: recorded as a violation.
func (b *Bed) CrashNode(site, node string) { b.notHere("crashing a node") }

// RestartNode is not on the local bed yet.
func (b *Bed) RestartNode(site, node string) error {
	return errors.New("restarting a node is not on the local bed yet")
}

// CrashController is not on the local bed yet: recorded as a violation.
func (b *Bed) CrashController(site string) { b.notHere("crashing a site's operator") }

// RestartController is not on the local bed yet: recorded as a violation.
func (b *Bed) RestartController(site string) { b.notHere("restarting a site's operator") }

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
