package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/hub"
	"github.com/baton-dr/baton/reports"
)

// The hub's invariants, checked as the world runs; a broken one is a
// violation with the events that led to it.
const (
	// invariantApprovalWithoutNodes: no approval is delivered onto a draft
	// that names no node.
	invariantApprovalWithoutNodes = "hub: an approval delivered onto a draft without nodes"
	// invariantNewRun: a changed discovery is a new run (a new OperatorOps
	// name), a run's name always carries the same discovery, and the draft
	// a work sizes and approves is the draft of the work's run.
	invariantNewRun = "hub: a changed discovery is a new run"
	// invariantPartition: what the hub writes while it cannot reach a site
	// shows up on the site only after the partition healed.
	invariantPartition = "hub: delivered through a partition"
	// invariantPhase: for one run, a request's phase only moves forward --
	// Pending, Discovering, Drafted, Deploying, Online -- or to Failed with
	// the site's reason, which stands.
	invariantPhase = "hub: a request's phase went back"
	// invariantTornDown: nothing deletes a site's StorageCluster or
	// StorageNodes (withdrawing a request orphans them).
	invariantTornDown = "site: storage torn down"
)

// hubChecks keeps what the invariants need to remember.
type hubChecks struct {
	hub *Hub
	// writes are, per work and generation, the agent's heal count when the
	// hub wrote it while cut off from the site, or -1 when it reached it.
	writes map[types.NamespacedName]map[int64]int
	// runs are the discovery (canonical JSON) each run name carried.
	runs map[string]string
	// discoveries are, per request, the run each discovery got.
	discoveries map[types.NamespacedName]map[string]string
	phases      map[types.NamespacedName]phaseSeen
	reported    map[string]bool
}

type phaseSeen struct {
	run   string
	phase v1.StorageSiteDeploymentPhase
}

func newHubChecks(h *Hub) *hubChecks {
	c := &hubChecks{hub: h, writes: map[types.NamespacedName]map[int64]int{}, runs: map[string]string{},
		discoveries: map[types.NamespacedName]map[string]string{}, phases: map[types.NamespacedName]phaseSeen{},
		reported: map[string]bool{}}
	for _, s := range h.world.sites {
		s.api.watch(func(e watchEvent) { c.siteWrite(s, e) })
	}
	return c
}

func (c *hubChecks) violate(invariant, message string) {
	if key := invariant + "\x00" + message; !c.reported[key] {
		c.reported[key] = true
		c.hub.world.violate(invariant, message)
	}
}

// workWritten notes a generation of a work the first time the hub writes it,
// with whether the hub reached the work's site then, and checks the runs it
// carries.
func (c *hubChecks) workWritten(e watchEvent) {
	work, ok := e.Object.(*workv1.ManifestWork)
	k := c.hub.klusterlet(e.Key.Namespace)
	if !ok || e.Deleted || k == nil {
		return
	}
	generations := c.writes[e.Key]
	if generations == nil {
		generations = map[int64]int{}
		c.writes[e.Key] = generations
	}
	if _, seen := generations[work.Generation]; seen {
		return
	}
	generations[work.Generation] = -1
	if k.sample(); !k.reachable {
		generations[work.Generation] = k.heals
	}
	if _, deployment := work.Labels[hub.DeploymentLabel]; deployment {
		c.checkRuns(work)
	}
}

// checkRuns holds a deployment work to its run: one discovery per run name,
// and a draft patch only onto the run's own draft.
func (c *hubChecks) checkRuns(work *workv1.ManifestWork) {
	var run string
	var drafts []string
	for _, m := range work.Spec.Workload.Manifests {
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(m.Raw); err != nil {
			c.violate(invariantNewRun, fmt.Sprintf("work %s carries a manifest that does not parse: %v", work.Name, err))
			continue
		}
		switch o.GetKind() {
		case "OperatorOps":
			run = o.GetName()
			discovery, _ := json.Marshal(o.Object["spec"])
			if before, ok := c.runs[run]; ok && before != string(discovery) {
				c.violate(invariantNewRun, fmt.Sprintf("run %s carried the discovery %s and now %s", run, before, discovery))
			}
			c.runs[run] = string(discovery)
		case "ClusterDeploymentConfig":
			drafts = append(drafts, o.GetName())
		}
	}
	for _, draft := range drafts {
		if draft != run {
			c.violate(invariantNewRun, fmt.Sprintf("work %s sizes the draft %s, not its run %s's", work.Name, draft, run))
		}
	}
}

// delivering checks a work the agent is about to apply: a generation the hub
// wrote while cut off from the site needs a heal since.
func (c *hubChecks) delivering(k *klusterlet, work *workv1.ManifestWork) {
	heals, ok := c.writes[client.ObjectKeyFromObject(work)][work.Generation]
	if ok && heals >= 0 && k.heals == heals {
		c.violate(invariantPartition, fmt.Sprintf("%s applies %s generation %d, written while the hub could not reach %s, before the partition healed",
			k.endpoint, work.Name, work.Generation, k.site.Name))
	}
}

// applyingDraft checks a draft patch before the agent applies it: an
// approval needs a draft that names nodes.
func (c *hubChecks) applyingDraft(k *klusterlet, patch *unstructured.Unstructured) {
	approved, _, _ := unstructured.NestedBool(patch.Object, "spec", "approved")
	if !approved {
		return
	}
	draft := &v1.ClusterDeploymentConfig{}
	err := k.site.api.store.Get(context.Background(), client.ObjectKeyFromObject(patch), draft)
	if err != nil || len(draft.Spec.NodeSets) == 0 {
		c.violate(invariantApprovalWithoutNodes, fmt.Sprintf("the hub approves the draft %s on %s, which names no node (%v)",
			patch.GetName(), k.site.Name, err))
	}
}

// afterDeployment checks a request after a pass of its reconciler: its phase
// moves forward within a run, and each discovery has its own run.
func (c *hubChecks) afterDeployment(key types.NamespacedName) {
	request := &v1.StorageSiteDeployment{}
	if err := c.hub.api.store.Get(context.Background(), key, request); err != nil {
		delete(c.phases, key)
		return
	}
	status := request.Status
	if status.Phase == "" {
		return
	}
	last, seen := c.phases[key]
	if seen && last.run == status.Run && status.Phase.Rank() < last.phase.Rank() {
		c.violate(invariantPhase, fmt.Sprintf("%s went from %s back to %s on run %s", key, last.phase, status.Phase, status.Run))
	}
	if seen && last.run == status.Run && last.phase == v1.StorageSiteDeploymentFailed && status.Phase != last.phase {
		c.violate(invariantPhase, fmt.Sprintf("%s left Failed for %s on run %s", key, status.Phase, status.Run))
	}
	if status.Phase == v1.StorageSiteDeploymentFailed && status.Reason == "" {
		c.violate(invariantPhase, fmt.Sprintf("%s is Failed without a reason", key))
	}
	if !seen || last != (phaseSeen{run: status.Run, phase: status.Phase}) {
		detail := ""
		if status.Phase == v1.StorageSiteDeploymentFailed {
			detail = ": " + status.Reason
		}
		c.hub.world.event(request.Spec.Site, reports.EventAction, "hub: %s is %s (run %s)%s", key, status.Phase, status.Run, detail)
	}
	c.phases[key] = phaseSeen{run: status.Run, phase: status.Phase}
	c.checkDiscovery(key, request)
}

// checkDiscovery holds a request's discoveries and runs one to one, once the
// status describes the spec.
func (c *hubChecks) checkDiscovery(key types.NamespacedName, request *v1.StorageSiteDeployment) {
	if request.Status.Run == "" || request.Status.ObservedGeneration != request.Generation {
		return
	}
	encoded, _ := json.Marshal(request.Spec.Discovery)
	discovery := string(encoded)
	runs := c.discoveries[key]
	if runs == nil {
		runs = map[string]string{}
		c.discoveries[key] = runs
	}
	if run, ok := runs[discovery]; ok && run != request.Status.Run {
		c.violate(invariantNewRun, fmt.Sprintf("%s: the discovery %s ran as %s and now as %s", key, discovery, run, request.Status.Run))
	}
	for _, other := range slices.Sorted(maps.Keys(runs)) {
		if runs[other] == request.Status.Run && other != discovery {
			c.violate(invariantNewRun, fmt.Sprintf("%s: the discovery changed from %s to %s and kept the run %s", key, other, discovery, runs[other]))
		}
	}
	runs[discovery] = request.Status.Run
}

// siteWrite watches a site's API server for storage being deleted.
func (c *hubChecks) siteWrite(s *Site, e watchEvent) {
	if e.Deleted && (e.Kind == "StorageCluster" || e.Kind == "StorageNode") {
		c.violate(invariantTornDown, fmt.Sprintf("the %s %s on %s was deleted", e.Kind, e.Key, s.Name))
	}
}
