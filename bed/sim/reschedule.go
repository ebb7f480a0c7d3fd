package sim

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// A pod whose node crashed. Kubernetes does not start a StatefulSet's pod
// elsewhere while its node merely stopped answering: the node controller marks
// the node NotReady after its grace period, and only once the node is known
// down -- tainted out-of-service (non-graceful node shutdown) by an
// administrator or a fencing operator -- is the pod force-deleted and its
// volumes detached. The bed folds that into one delay, podEvictionDelay, after
// which the scheduler binds the pod to another node of the same site that is
// up, and that node's kubelet stages the volumes there, retrying every step as
// a kubelet does, until the driver has the replica promoted.
//
// Within a site every replica is written under DRBD protocol C, so the move
// must lose no acknowledged write: it is judged as a planned move is.

// podEvictionDelay is how long a pod stays on a crashed node before it is
// scheduled elsewhere: the node-monitor grace period (40 s) and the time to
// taint the node out-of-service.
const podEvictionDelay = time.Minute

// eviction is a pod lost with its node, on its way to another one.
type eviction struct {
	from  *Node
	since time.Time
	// to is the node the pod is bound to once the delay passed; nil before.
	to *Node
}

// running reports whether the application's pod runs and can write.
func (a *app) running() bool { return a.node != nil && a.devices != nil }

// loseCrashedPods notices the pods whose node went down under them: the
// application process dies with the node, its devices are gone.
func (w *World) loseCrashedPods() {
	for _, name := range w.appOrder {
		a := w.apps[name]
		if a.node == nil || a.node.Up {
			continue
		}
		w.event(a.site, reports.EventFault, "%s's pod is lost with %s", a.spec.Name, a.node.Endpoint)
		closeAll(a.devices)
		a.evicted = &eviction{from: a.node, since: w.Sim.Now()}
		a.node, a.devices = nil, nil
	}
}

// reschedule moves each evicted pod on: binds it to an up node once the delay
// passed, and tries to stage its volumes there. When every volume is staged
// the application starts and what it finds is judged.
func (w *World) reschedule() {
	for _, name := range w.appOrder {
		a := w.apps[name]
		e := a.evicted
		if e == nil || w.Sim.Now().Before(e.since.Add(podEvictionDelay)) {
			continue
		}
		if e.to != nil && !e.to.Up {
			e.from, e.since, e.to = e.to, w.Sim.Now(), nil
			continue
		}
		if e.to == nil {
			w.Site(a.site).taint(e.from.Name, !e.from.Up)
			if e.to = w.upNode(a.site, e.from); e.to == nil {
				continue
			}
			w.event(a.site, reports.EventAction, "%s's pod is scheduled on %s", a.spec.Name, e.to.Endpoint)
		}
		devices, err := w.stageNow(e.to, a.volumes)
		if err != nil {
			continue // the kubelet retries
		}
		a.node, a.devices, a.evicted, a.restartAt = e.to, devices, nil, time.Time{}
		a.datasets = w.datasetsOf(e.to, a.volumes)
		w.resumeOn(a, e)
	}
}

// upNode is a node of site that is up, preferring one other than avoid.
func (w *World) upNode(site string, avoid *Node) *Node {
	var fallback *Node
	for _, n := range w.Site(site).Nodes {
		switch {
		case !n.Up:
		case n != avoid:
			return n
		default:
			fallback = n
		}
	}
	return fallback
}

// stageNow makes one attempt at staging and opening every volume on n.
func (w *World) stageNow(n *Node, volumes []appVolume) (workload.Devices, error) {
	devices := workload.Devices{}
	for _, v := range volumes {
		if err := w.stageOne(n, v); err != nil {
			closeAll(devices)
			return nil, err
		}
		ref, err := w.attachedMember(n, v.handle)
		if err != nil {
			closeAll(devices)
			return nil, err
		}
		d, err := n.open("vol-" + ref)
		if err != nil {
			closeAll(devices)
			return nil, err
		}
		devices[v.name] = d
	}
	return devices, nil
}

// resumeOn verifies the application where its pod came back and lets it go
// on from what survived. Losing an acknowledged write here is a violation:
// the site's other replica had every one of them.
func (w *World) resumeOn(a *app, e *eviction) {
	verdict := a.model.Verify(a.devices, w.Sim.Now())
	w.event(a.site, reports.EventRole, "%s runs on %s, %s after %s went down: %d acknowledged writes lost",
		a.spec.Name, a.node.Endpoint, w.Sim.Now().Sub(e.since), e.from.Endpoint, verdict.LostAcknowledged())
	if verdict.LostAcknowledged() > 0 {
		w.violate("volume: a node crash lost acknowledged writes", fmt.Sprintf(
			"%s moved from %s to %s and lost %d acknowledged writes", a.spec.Name, e.from.Endpoint,
			a.node.Endpoint, verdict.LostAcknowledged()))
	}
	if !verdict.Consistent() {
		w.violate("volume: inconsistent after a node crash", fmt.Sprintf("%s on %s: %s",
			a.spec.Name, a.node.Endpoint, verdict.String()))
		return
	}
	if err := a.model.Resume(verdict); err != nil {
		w.violate("application: cannot resume after a node crash", fmt.Sprintf("%s on %s: %v",
			a.spec.Name, a.node.Endpoint, err))
	}
}

// awaitPod runs the world until the application's pod runs again, when a
// crash took it down; it is a no-op when the pod runs.
func (w *World) awaitPod(a *app) error {
	if a.evicted == nil {
		return nil
	}
	if !w.RunUntil(a.running, actionLimit) {
		return fmt.Errorf("%s's pod lost with %s did not run again within %s", a.spec.Name,
			a.evicted.from.Endpoint, actionLimit)
	}
	return nil
}
