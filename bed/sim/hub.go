package sim

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/hub"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// The hub in the world. With CRD records the bed has an Open Cluster
// Management hub: its API server (a simulated apiServer with the hub's
// scheme, a ManagedCluster per site, accepted), the hub's two reconcilers
// (StorageSiteDeploymentReconciler, SiteTestFailoverReconciler) scheduled by
// the simulation on their watches and requeues, and on each site the doubles
// of OCM's agents (klusterlet) that carry works and views across the
// simulated network. Each site runs its operator's deployment flow
// (siteFlow) on its own API server. With memory records there is no site API
// server for the agents to apply to, and no hub.
//
// What the doubles leave out of OCM (each file says how it does the rest):
//   - No AppliedManifestWork objects and no owner references on applied
//     resources: the agent keeps what each work applied in memory (it never
//     crashes), and any delete option but Orphan deletes directly;
//     SelectivelyOrphan is not modelled.
//   - Server-side apply for drafts only, owned at the granularity of the
//     spec's top-level fields (sizing is one field); metadata is not applied.
//   - Status feedback: JSONPaths with string values only (what the hub
//     reads); no WellKnownStatus.
//   - No ManagedCluster leases: a site stays accepted and Available on the
//     hub whatever the network does; the agents act on reachability alone.
//   - A watch event carries no object: the agent reads the work or view as
//     it is when the event arrives (and only if it reaches the hub then).
//   - No executor subjects, RBAC or admission webhooks on either side; the
//     API servers run no OpenAPI validation or defaulting (the bed spells
//     its sizing out) and only the CEL rules in admit.
//   - Wall-clock values the fake client and the hub's own condition merging
//     write (deletionTimestamp, the hub's conditions' lastTransitionTime)
//     are never read by the simulation nor logged.

// hubEndpoint is the hub's network endpoint.
const hubEndpoint = "hub"

// hubNamespace is where the bed's hub requests live.
const hubNamespace = "storage"

// Field managers of the hub's API server's users.
const (
	hubManager       = "baton-hub"
	operatorManager  = "baton-controller"
	bedManager       = "kubectl"
	workAgentManager = workv1.DefaultFieldManager
	viewAgentManager = "work-manager"
)

// Hub is the bed's OCM hub.
type Hub struct {
	world *World
	api   *apiServer
	// Client is the hub's API server as its controllers reach it.
	Client      client.Client
	deployments *controller
	drills      *controller
	klusterlets []*klusterlet
	checks      *hubChecks
}

func newHub(w *World) (*Hub, error) {
	scheme := runtime.NewScheme()
	if err := hub.AddToScheme(scheme); err != nil {
		return nil, err
	}
	api := newAPIServer(hubEndpoint, w.Sim, scheme, &v1.StorageSiteDeployment{}, &v1.SiteTestFailover{},
		&workv1.ManifestWork{}, &viewv1beta1.ManagedClusterView{})
	h := &Hub{world: w, api: api, Client: api.client(hubManager)}
	h.checks = newHubChecks(h)
	h.deployments = newController(w, "hub storagesitedeployment", &hub.StorageSiteDeploymentReconciler{Client: h.Client}, nil)
	h.deployments.after = h.checks.afterDeployment
	h.drills = newController(w, "hub sitetestfailover", &hub.SiteTestFailoverReconciler{Client: h.Client}, nil)
	api.watch(h.onWrite)
	admin := api.client(bedManager)
	for _, s := range w.sites {
		cluster := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: s.Name},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		if err := admin.Create(context.Background(), cluster); err != nil {
			return nil, fmt.Errorf("hub: %w", err)
		}
		h.klusterlets = append(h.klusterlets, newKlusterlet(h, s))
	}
	return h, nil
}

// start schedules the agents' loops.
func (h *Hub) start() {
	for _, k := range h.klusterlets {
		k.start()
	}
}

// onWrite is the hub's watches: the controllers' (a request, and the works
// and views that map back to it through their annotation) and the agents'
// (each site's works and views, across the network).
func (h *Hub) onWrite(e watchEvent) {
	switch e.Kind {
	case "StorageSiteDeployment":
		h.deployments.enqueue(e.Key, watchDelay)
	case "SiteTestFailover":
		h.drills.enqueue(e.Key, watchDelay)
	case "ManifestWork", "ManagedClusterView":
		labels := e.Object.GetLabels()
		if request, ok := requestOf(e.Object); ok {
			if _, mine := labels[hub.DeploymentLabel]; mine {
				h.deployments.enqueue(request, watchDelay)
			}
			if _, mine := labels[hub.TestFailoverLabel]; mine {
				h.drills.enqueue(request, watchDelay)
			}
		}
		if k := h.klusterlet(e.Key.Namespace); k != nil {
			k.hubEvent(e)
		}
	}
	if e.Kind == "ManifestWork" {
		h.checks.workWritten(e)
	}
}

// requestOf is the request a work or view names in its annotation.
func requestOf(o client.Object) (types.NamespacedName, bool) {
	namespace, name, ok := strings.Cut(o.GetAnnotations()[hub.RequestAnnotation], "/")
	return types.NamespacedName{Namespace: namespace, Name: name}, ok && namespace != "" && name != ""
}

func (h *Hub) klusterlet(site string) *klusterlet {
	for _, k := range h.klusterlets {
		if k.site.Name == site {
			return k
		}
	}
	return nil
}

// networkChanged samples whether each site's agents reach the hub, after a
// partition or a heal: what the delivery invariant compares against.
func (h *Hub) networkChanged() {
	for _, k := range h.klusterlets {
		k.sample()
	}
}
