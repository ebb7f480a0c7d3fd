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

// applyCuts makes the sites' routes what cuts say (bed.Partitions' Apply):
// a path between the sites is cut by a blackhole route in the namespace of
// the site that sends (the packets are dropped in the kernel). A path
// between the hub -- this process, which delivers Ramen's wishes -- and a
// site has no route to cut: the hub stops reaching the site while either is
// cut (Partitions.Reaches).
func (b *Bed) applyCuts(cuts []bed.Path) error {
	var errs []error
	for _, from := range SiteNames {
		for _, to := range SiteNames {
			switch {
			case from == to:
			case slices.Contains(cuts, bed.Path{From: from, To: to}):
				errs = append(errs, b.net.partition(from, to))
			default:
				errs = append(errs, b.net.heal(from, to))
			}
		}
	}
	return errors.Join(errs...)
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
