package sim

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/reports"
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

// loseCrashedPods notices the pods whose node went down under them: the
// application process dies with the node, its devices are gone.
func (w *World) loseCrashedPods() {
	for _, a := range w.apps.All() {
		p := podOf(a)
		if p == nil || p.node == nil || p.node.Up {
			continue
		}
		w.event(a.Site, reports.EventFault, "%s's pod is lost with %s", a.Spec.Name, p.node.Endpoint)
		apps.CloseDevices(p.devices)
		p.evicted = &eviction{from: p.node, since: w.Sim.Now()}
		p.node, p.devices = nil, nil
	}
}

// reschedule moves each evicted pod on: binds it to an up node once the delay
// passed, and tries to stage its volumes there. When every volume is staged
// the application starts and what it finds is judged.
func (w *World) reschedule() {
	for _, a := range w.apps.All() {
		p := podOf(a)
		if p == nil || p.evicted == nil || w.Sim.Now().Before(p.evicted.since.Add(podEvictionDelay)) {
			continue
		}
		e := p.evicted
		if e.to != nil && !e.to.Up {
			e.from, e.since, e.to = e.to, w.Sim.Now(), nil
			continue
		}
		if e.to == nil {
			w.Site(a.Site).taint(e.from.Name, !e.from.Up)
			if e.to = w.upNode(a.Site, e.from); e.to == nil {
				continue
			}
			w.event(a.Site, reports.EventAction, "%s's pod is scheduled on %s", a.Spec.Name, e.to.Endpoint)
		}
		devices, err := w.stage(e.to, a.Spec.Name, a.Volumes, false)
		if err != nil {
			continue // the kubelet retries
		}
		a.Pod = w.podOn(e.to, a.Volumes, devices)
		w.resumeOn(a, e)
	}
}

// upNode is a node of site that is up, preferring one other than avoid; the
// seed's scheduler stream chooses among those, as a scheduler's scoring
// would, so that a sweep explores every node (variation.go).
func (w *World) upNode(site string, avoid *Node) *Node {
	var candidates []*Node
	var fallback *Node
	for _, n := range w.Site(site).Nodes {
		switch {
		case !n.Up:
		case n != avoid:
			candidates = append(candidates, n)
		default:
			fallback = n
		}
	}
	if len(candidates) == 0 {
		return fallback
	}
	return candidates[w.Sim.Rand("bed/scheduler").IntN(len(candidates))]
}

// resumeOn verifies the application where its pod came back and lets it go
// on from what survived. Losing an acknowledged write here is a violation:
// the site's other replica had every one of them.
func (w *World) resumeOn(a *apps.App, e *eviction) {
	node := podOf(a).node
	verdict := a.Model.Verify(a.Pod.Devices(), w.Sim.Now())
	w.event(a.Site, reports.EventRole, "%s runs on %s, %s after %s went down: %d acknowledged writes lost",
		a.Spec.Name, node.Endpoint, w.Sim.Now().Sub(e.since), e.from.Endpoint, verdict.LostAcknowledged())
	if verdict.LostAcknowledged() > 0 {
		w.violate("volume: a node crash lost acknowledged writes", fmt.Sprintf(
			"%s moved from %s to %s and lost %d acknowledged writes", a.Spec.Name, e.from.Endpoint,
			node.Endpoint, verdict.LostAcknowledged()))
	}
	if !verdict.Consistent() {
		w.violate("volume: inconsistent after a node crash", fmt.Sprintf("%s on %s: %s",
			a.Spec.Name, node.Endpoint, verdict.String()))
		return
	}
	if err := a.Model.Resume(verdict); err != nil {
		w.violate("application: cannot resume after a node crash", fmt.Sprintf("%s on %s: %v",
			a.Spec.Name, node.Endpoint, err))
	}
}
