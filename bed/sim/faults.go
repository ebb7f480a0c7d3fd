package sim

import (
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/sim/network"
)

// The bed's faults. Endpoints are scoped names: "site-a" covers the whole
// site, "site-a/node-1" one node, "site-a/controller" the site's operator,
// "hub" the hub.

// Partition cuts the path from a to b (one-way), or both ways.
func (w *World) Partition(a, b string, bothWays bool) {
	w.event(a, reports.EventPartition, "partition %s from %s (both ways: %v)", a, b, bothWays)
	if bothWays {
		w.Net.PartitionBoth(a, b)
	} else {
		w.Net.Partition(a, b)
	}
	w.observe()
}

// Heal restores every path between a and b.
func (w *World) Heal(a, b string) {
	w.event(a, reports.EventPartition, "heal %s and %s", a, b)
	w.Net.Heal(a, b)
	w.observe()
}

// HealAll restores every path.
func (w *World) HealAll() {
	w.event("", reports.EventPartition, "heal every partition")
	w.Net.HealAll()
	w.observe()
}

// Degrade makes the link between the sites slow and unreliable.
func (w *World) Degrade(d bed.Degradation) {
	w.event("", reports.EventPartition, "degrade the sites' link: +%s, %d B/s, loss %.2f, duplicate %.2f, reorder %.2f",
		d.ExtraLatency, d.BandwidthBytesPerSecond, d.Loss, d.Duplicate, d.Reorder)
	link := w.options.SiteLink
	link.Loss, link.Duplicate, link.Reorder = d.Loss, d.Duplicate, d.Reorder
	if d.Reorder > 0 && link.ReorderDelayMax == 0 {
		link.ReorderDelayMax = 2 * time.Second
	}
	w.Net.SetLinkBoth(SiteNames[0], SiteNames[1], link)
	w.Net.SlowLink(SiteNames[0], SiteNames[1], network.Slowdown{ExtraLatency: d.ExtraLatency,
		BandwidthBytesPerSecond: d.BandwidthBytesPerSecond})
}

// Restore gives the sites their healthy link back (partitions stay).
func (w *World) Restore() {
	w.event("", reports.EventPartition, "restore the sites' link")
	w.Net.SetLinkBoth(SiteNames[0], SiteNames[1], w.options.SiteLink)
	w.Net.ClearSlowdowns(SiteNames[0], SiteNames[1])
}

// observe lets every component that watches its links see the change now, so
// the log shows a loss when it happened.
func (w *World) observe() {
	for _, s := range w.sites {
		if s.DRBD != nil {
			s.DRBD.Observe()
		}
	}
	if w.hub != nil {
		w.hub.networkChanged()
	}
}

// CrashNode stops a node as a power cut would: writes not yet synced are lost,
// DRBD resources go down, the agent's memory (streams in flight) is gone.
func (w *World) CrashNode(site, node string) {
	n := w.Site(site).Node(node)
	if !n.Up {
		return
	}
	w.event(site, reports.EventFault, "crash %s", n.Endpoint)
	n.Up = false
	n.Pool.Crash()
	if d := n.site.DRBD; d != nil {
		d.Crash(n.Name)
	}
}

// RestartNode brings a crashed node back with a fresh agent: whatever it
// adopts, it finds on its pool and in its DRBD metadata.
func (w *World) RestartNode(site, node string) error {
	n := w.Site(site).Node(node)
	if n.Up {
		return nil
	}
	w.event(site, reports.EventFault, "restart %s", n.Endpoint)
	if d := n.site.DRBD; d != nil {
		d.Restart(n.Name)
	}
	fresh, err := agent.New(n.agentOptions())
	if err != nil {
		return err
	}
	n.Agent, n.Up = fresh, true
	n.site.rebootCSI(n)
	n.site.taint(n.Name, false)
	return nil
}

// CrashController stops a site's operator; its records (the CRDs) stay.
func (w *World) CrashController(site string) {
	w.event(site, reports.EventFault, "crash %s/controller", site)
	w.Site(site).ControllerUp = false
}

// RestartController brings a site's operator back over the same records.
func (w *World) RestartController(site string) {
	w.event(site, reports.EventFault, "restart %s/controller", site)
	s := w.Site(site)
	if s.ControllerUp {
		return
	}
	s.ControllerUp = true
	if s.flow != nil {
		s.flow.restart()
	}
	if s.drills != nil {
		s.restartDrills()
	}
}
