package real

import (
	"context"
	"fmt"
	"slices"

	chaosv1alpha1 "github.com/chaos-mesh/chaos-mesh/api/v1alpha1"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// hub is the scoped name of the hub.
const hub = "hub"

// endpoint is the cluster a scoped name ("hub", "site-a") names.
func endpoint(name string) (Cluster, error) {
	if name == hub {
		return Hub, nil
	}
	for _, c := range Sites() {
		if c.Site == name {
			return c, nil
		}
	}
	return Cluster{}, fmt.Errorf("no endpoint %q: the real bed cuts between hub, %s and %s; nodes are not endpoints of its own "+
		"(each site has one)", name, SiteA.Site, SiteB.Site)
}

// Partition cuts a from c in the node containers' network namespaces
// (nftables, see partition.go); a cut between the hub and a site also
// stops the hub -- this process, which delivers Ramen's wishes -- reaching
// the site until Heal.
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
	if err := b.healSites(); err != nil {
		b.violate("bed: heal failed", err.Error())
	}
}

func (b *Bed) healSites() error {
	clear(b.hubCut)
	if len(b.chaos) == 0 {
		return nil
	}
	clear(b.chaos)
	return b.applyChaos()
}

// cut makes (on) or lifts (off) the NetworkChaos objects between a and c.
func (b *Bed) cut(a, c string, bothWays, on bool) error {
	from, err := endpoint(a)
	if err != nil {
		return err
	}
	to, err := endpoint(c)
	if err != nil {
		return err
	}
	if from.Name == to.Name {
		return nil
	}
	if on {
		address, _, err := nodeContainer(context.Background(), to)
		if err != nil {
			return err
		}
		o := partitionChaos(from, to, address, bothWays)
		b.chaos[o.Name] = o
	} else {
		for _, pair := range [][2]Cluster{{from, to}, {to, from}} {
			delete(b.chaos, partitionChaos(pair[0], pair[1], "", false).Name)
		}
	}
	if from.Name == Hub.Name || to.Name == Hub.Name {
		site := from.Site
		if from.Name == Hub.Name {
			site = to.Site
		}
		if on {
			b.hubCut[site] = true
		} else {
			delete(b.hubCut, site)
		}
	}
	return b.applyChaos()
}

// applyChaos injects the objects made, sorted by name, into the nodes;
// of each object it lifts it says first how many packets it dropped.
func (b *Bed) applyChaos() error {
	if dropped, err := droppedPackets(); err != nil {
		b.logf("", "reading the partitions' counters: %v", err)
	} else {
		lifted := make([]string, 0, len(dropped))
		for name := range dropped {
			if _, kept := b.chaos[name]; !kept {
				lifted = append(lifted, name)
			}
		}
		slices.Sort(lifted)
		for _, name := range lifted {
			b.event("", reports.EventPartition, "%s lifted: it dropped %d packets", name, dropped[name])
		}
	}
	names := make([]string, 0, len(b.chaos))
	for name := range b.chaos {
		names = append(names, name)
	}
	slices.Sort(names)
	objects := make([]chaosv1alpha1.NetworkChaos, len(names))
	for i, name := range names {
		objects[i] = b.chaos[name]
	}
	return applyChaos(objects)
}

// notSupported records, as a violation, a fault asked of the real bed that
// it does not make -- so that no scenario passes believing it happened.
func (b *Bed) notSupported(what string) {
	b.violate("bed: not supported on the real bed", what+" is not supported on the real bed")
}

func errNotSupported(what string) error {
	return fmt.Errorf("%s is not supported on the real bed", what)
}

// Degrade is not supported on the real bed yet (tc netem in the nodes).
func (b *Bed) Degrade(d bed.Degradation) { b.notSupported("degrading the sites' link") }

// Restore has nothing to restore.
func (b *Bed) Restore() {}

// CrashNode is not supported on the real bed yet.
func (b *Bed) CrashNode(site, node string) { b.notSupported("crashing a storage node") }

// RestartNode is not supported on the real bed yet.
func (b *Bed) RestartNode(site, node string) error {
	return errNotSupported("restarting a storage node")
}

// CrashController is not supported on the real bed yet.
func (b *Bed) CrashController(site string) { b.notSupported("crashing a site's operator") }

// RestartController has nothing to restart.
func (b *Bed) RestartController(site string) {}

// FillPool is not supported on the real bed yet.
func (b *Bed) FillPool(site, node string) { b.notSupported("filling a node's pool (disk full)") }

// FreePool has nothing to free.
func (b *Bed) FreePool(site, node string) {}

// FailAPI is not supported on the real bed yet.
func (b *Bed) FailAPI(endpoint string, rate float64) { b.notSupported("failing the APIs' calls") }

// HealAPI has nothing to heal.
func (b *Bed) HealAPI(endpoint string) {}

// Drill is not supported on the real bed yet.
func (b *Bed) Drill(app, site string) (workload.Verdict, error) {
	return workload.Verdict{}, errNotSupported("a test fail-over (drill)")
}

// RequestStorage is not supported on the real bed yet: no OCM on its hub.
func (b *Bed) RequestStorage(r bed.StorageRequest) error {
	return errNotSupported("the hub's storage requests (OCM, baton-hub)")
}

// RequestedStorage is not supported on the real bed yet.
func (b *Bed) RequestedStorage(site string) (bed.Storage, error) {
	return bed.Storage{}, errNotSupported("the hub's storage requests (OCM, baton-hub)")
}

// WithdrawStorage is not supported on the real bed yet.
func (b *Bed) WithdrawStorage(site string) error {
	return errNotSupported("the hub's storage requests (OCM, baton-hub)")
}

// SiteStorage is not supported on the real bed yet.
func (b *Bed) SiteStorage(site string) (bed.Storage, error) {
	return bed.Storage{}, errNotSupported("reading a site's storage for the hub scenarios")
}
