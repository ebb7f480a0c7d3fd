package sim

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// The disk-full fault: a runaway writer on a node's pool (sim/zfs's filler)
// takes every free block until it is stopped and its dataset destroyed.

// FillPool fills a node's pool.
func (w *World) FillPool(site, node string) {
	n := w.Site(site).Node(node)
	if n.Pool.Filled() {
		return
	}
	w.event(site, reports.EventDiskFull, "fill %s's pool (a runaway writer takes every free block)", n.Endpoint)
	n.Pool.Fill()
}

// FreePool stops the writer and destroys its dataset.
func (w *World) FreePool(site, node string) {
	n := w.Site(site).Node(node)
	if !n.Pool.Filled() {
		return
	}
	w.event(site, reports.EventDiskFull, "free %s's pool", n.Endpoint)
	n.Pool.Unfill()
}

// restartBackoff is how long a pod whose application stopped at a failed
// write waits before it starts again (the kubelet's back-off, simplified).
const restartBackoff = 10 * time.Second

// refusedWrite handles a write the application's device refused. On a full
// pool that is an I/O error the application survives as a database survives
// a failed fsync: it stops, its operation unacknowledged, and its pod starts
// it again later over what the volume holds. Anywhere else the refusal is a
// violation: nothing in the DR machinery may fence the primary.
func (w *World) refusedWrite(a *apps.App, err error) {
	p := podOf(a)
	if p.node.Pool.Filled() {
		w.event(a.Site, reports.EventDiskFull, "%s on %s: a write failed on the full pool, it stops: %v",
			a.Spec.Name, p.node.Endpoint, err)
		p.restartAt = w.Sim.Now().Add(restartBackoff)
		return
	}
	w.violate("application: the primary refused a write", fmt.Sprintf(
		"%s on %s (%s): %v", a.Spec.Name, a.Site, p.node.Endpoint, err))
}

// restart starts a stopped application again where it runs: it recovers from
// what its volumes hold, which must be consistent and hold every write it
// acknowledged (only the refused operation may be lost), and goes on from
// there. A pool still full stops it again at its next write that needs space.
func (w *World) restart(a *apps.App) {
	p := podOf(a)
	p.restartAt = time.Time{}
	if err := readable(p.devices); err != nil {
		// Its volume's only UpToDate disk is detached (DRBD fails every
		// read): the application cannot start, and its pod tries again.
		// Nothing is judged lost until it can read its data.
		w.event(a.Site, reports.EventDiskFull, "%s on %s cannot start: %v", a.Spec.Name, p.node.Endpoint, err)
		p.restartAt = w.Sim.Now().Add(restartBackoff)
		return
	}
	verdict := a.Model.Verify(p.devices, w.Sim.Now())
	if !verdict.Consistent() {
		w.violate("volume: inconsistent after a failed write", fmt.Sprintf("%s on %s: %s",
			a.Spec.Name, p.node.Endpoint, verdict.String()))
		return
	}
	if lost := verdict.LostAcknowledged(); lost > 0 {
		w.violate("volume: a failed write lost acknowledged writes", fmt.Sprintf(
			"%s on %s restarted after a failed write without %d acknowledged writes", a.Spec.Name, p.node.Endpoint, lost))
	}
	if err := a.Model.Resume(verdict); err != nil {
		w.violate("application: cannot resume after a failed write", err.Error())
		return
	}
	w.event(a.Site, reports.EventAction, "%s restarts on %s", a.Spec.Name, p.node.Endpoint)
}

// readable reads the first block of each of an application's volumes, in
// name order, as its start does: an I/O error means it cannot start.
func readable(devices workload.Devices) error {
	buf := make([]byte, 512)
	for _, name := range slices.Sorted(maps.Keys(devices)) {
		if _, err := devices[name].ReadAt(buf, 0); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading volume %s: %w", name, err)
		}
	}
	return nil
}
