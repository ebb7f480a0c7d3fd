package real

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	if len(b.cuts) == 0 {
		return nil
	}
	clear(b.cuts)
	return b.applyCuts()
}

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
	pairs := [][2]string{{from.Name, to.Name}}
	if bothWays || !on {
		pairs = append(pairs, [2]string{to.Name, from.Name})
	}
	for _, key := range pairs {
		if on {
			b.cuts[key] = true
		} else {
			delete(b.cuts, key)
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
	return b.applyCuts()
}

// applyCuts renders the cuts made into every node's table.
func (b *Bed) applyCuts() error {
	addresses := map[string]string{}
	for _, c := range Clusters() {
		ip, _, err := nodeContainer(context.Background(), c)
		if err != nil {
			return err
		}
		addresses[c.Name] = ip
	}
	var keys [][2]string
	for k := range b.cuts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y [2]string) int { return strings.Compare(x[0]+x[1], y[0]+y[1]) })
	var cuts []Cut
	for _, k := range keys {
		from, _ := clusterNamed(k[0])
		to, _ := clusterNamed(k[1])
		cuts = append(cuts, Cut{From: from, To: to})
	}
	return applyCuts(cuts, addresses)
}

func clusterNamed(name string) (Cluster, bool) {
	for _, c := range Clusters() {
		if c.Name == name {
			return c, true
		}
	}
	return Cluster{}, false
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
