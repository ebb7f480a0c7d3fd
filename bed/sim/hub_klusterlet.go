package sim

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
	"github.com/baton-dr/baton/reports"
)

// The agents' cadences. OCM's work agent applies a work when its watch sees
// it change and resyncs every work, its status and its feedback on the status
// sync interval; the view agent re-reads each view's object every
// updateIntervalSeconds of the view's scope.
const (
	statusSyncInterval = 10 * time.Second
	viewTick           = 5 * time.Second
	// defaultViewInterval is the view agent's interval for a scope without one.
	defaultViewInterval = 30 * time.Second
	// watchEventBytes is the size of a watch event on the wire.
	watchEventBytes = 2 << 10
)

// klusterlet is the simulation's double of OCM's agents on one managed site:
// the work agent (hub_workagent.go) and the view agent of stolostron's
// work-manager add-on (hub_viewagent.go). They run on the site, at the
// endpoint "<site>/klusterlet", and move state between the hub's API server
// and the site's only while the simulated network lets the two through both
// ways: a watch or a list is a connection the agent holds to the hub, which a
// cut in either direction breaks. Watch events cross the network as messages
// (and are lost in a cut); everything else happens on the agents' ticks while
// the hub is reachable.
type klusterlet struct {
	hub      *Hub
	site     *Site
	endpoint string
	// The hub's API server as the work agent and as the view agent, and the
	// site's as the work agent.
	hubWork, hubView, siteClient client.Client
	// applied is the work agent's AppliedManifestWorks: what each work put
	// on the site, by work name.
	applied map[string]appliedWork
	// answered is when the view agent last answered each view, by name.
	answered map[string]answeredView
	// reachable is the last sample of the hub <-> site path; heals counts
	// its cut -> reachable transitions (the delivery invariant's clock).
	reachable bool
	heals     int
}

type appliedWork struct {
	generation int64
	resources  []appliedResource
}

type appliedResource struct {
	gvk schema.GroupVersionKind
	key types.NamespacedName
}

type answeredView struct {
	generation int64
	at         time.Time
}

func newKlusterlet(h *Hub, s *Site) *klusterlet {
	k := &klusterlet{hub: h, site: s, endpoint: s.Name + "/klusterlet",
		hubWork: h.api.client(workAgentManager), hubView: h.api.client(viewAgentManager),
		siteClient: s.api.client(workAgentManager),
		applied:    map[string]appliedWork{}, answered: map[string]answeredView{}, reachable: true}
	return k
}

func (k *klusterlet) start() {
	w := k.hub.world
	w.every(statusSyncInterval, k.endpoint+" work agent resync", k.resyncWorks)
	w.every(viewTick, k.endpoint+" view agent", k.refreshViews)
}

// up says whether the agents reach the hub now, both ways.
func (k *klusterlet) up() bool {
	k.sample()
	return k.reachable
}

// sample records the path's state, counting heals.
func (k *klusterlet) sample() {
	net := k.hub.world.Net
	now := net.Reachable(hubEndpoint, k.endpoint) && net.Reachable(k.endpoint, hubEndpoint)
	if now == k.reachable {
		return
	}
	k.reachable = now
	if now {
		k.heals++
	}
	state := "cut off from"
	if now {
		state = "reaches"
	}
	k.hub.world.event(k.site.Name, reports.EventPartition, "%s %s the hub", k.endpoint, state)
}

// hubEvent is a write on the hub in the site's namespace, which the agents'
// watches carry across the network. An event the agent has nothing to do
// for (its own status writes) is not sent: the informer gets it and drops it.
func (k *klusterlet) hubEvent(e watchEvent) {
	w := k.hub.world
	switch o := e.Object.(type) {
	case *workv1.ManifestWork:
		if !e.Deleted && !k.workDue(o) {
			return
		}
		w.Net.Send(hubEndpoint, k.endpoint, watchEventBytes, "watch ManifestWork "+e.Key.String(), func() {
			if k.up() {
				k.syncWorkNamed(e.Key.Name)
			}
		})
	case *viewv1beta1.ManagedClusterView:
		if e.Deleted || k.answered[o.Name].generation == o.Generation {
			return
		}
		w.Net.Send(hubEndpoint, k.endpoint, watchEventBytes, "watch ManagedClusterView "+e.Key.String(), func() {
			if k.up() {
				k.answerNamed(e.Key.Name)
			}
		})
	}
}

// hubGet reads one object of the site's namespace on the hub into object,
// through c (each agent reads the hub as its own identity). A read that
// fails for another reason than the object's absence is logged.
func (k *klusterlet) hubGet(c client.Client, kind, name string, object client.Object) bool {
	err := c.Get(context.Background(), types.NamespacedName{Namespace: k.site.Name, Name: name}, object)
	if err != nil && !apierrors.IsNotFound(err) {
		k.hub.world.Sim.Logf("agent", "%s: get %s %s: %v", k.endpoint, kind, name, err)
	}
	return err == nil
}

// resyncWorks is the work agent's periodic pass over the site's works.
func (k *klusterlet) resyncWorks() {
	if !k.up() {
		return
	}
	var works workv1.ManifestWorkList
	if err := k.hubWork.List(context.Background(), &works, client.InNamespace(k.site.Name)); err != nil {
		k.hub.world.Sim.Logf("agent", "%s: list works: %v", k.endpoint, err)
		return
	}
	for i := range works.Items {
		k.syncWork(context.Background(), &works.Items[i])
	}
}

// refreshViews is the view agent's periodic pass: every view whose interval
// passed, or whose scope it has not answered, is read again.
func (k *klusterlet) refreshViews() {
	if !k.up() {
		return
	}
	var views viewv1beta1.ManagedClusterViewList
	if err := k.hubView.List(context.Background(), &views, client.InNamespace(k.site.Name)); err != nil {
		k.hub.world.Sim.Logf("agent", "%s: list views: %v", k.endpoint, err)
		return
	}
	now := k.hub.world.Sim.Now()
	for i := range views.Items {
		view := &views.Items[i]
		last, ok := k.answered[view.Name]
		interval := time.Duration(view.Spec.Scope.UpdateIntervalSeconds) * time.Second
		if interval <= 0 {
			interval = defaultViewInterval
		}
		if !ok || last.generation != view.Generation || now.Sub(last.at) >= interval {
			k.answer(context.Background(), view)
		}
	}
}
