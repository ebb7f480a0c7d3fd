package hub

import (
	"context"
	"fmt"
	"slices"
	"time"

	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/conditions"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// deploymentConditions are the condition types the reconciler owns.
var deploymentConditions = []string{
	v1.StorageSiteDeploymentDeliveredCondition, v1.StorageSiteDeploymentDiscoveredCondition,
	v1.StorageSiteDeploymentApprovedCondition, v1.StorageSiteDeploymentReadyCondition,
}

// The reconciler's permissions, from which deploy/hub/rbac is generated.
// +kubebuilder:rbac:groups=storage.baton.dev,resources=storagesitedeployments,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=storage.baton.dev,resources=storagesitedeployments/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=storage.baton.dev,resources=storagesitedeployments/finalizers,verbs=update
// +kubebuilder:rbac:groups=work.open-cluster-management.io,resources=manifestworks,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=view.open-cluster-management.io,resources=managedclusterviews,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch

// StorageSiteDeploymentReconciler carries a StorageSiteDeployment to its
// site through one ManifestWork and projects the site's answers back.
type StorageSiteDeploymentReconciler struct {
	Client client.Client
}

// Reconcile runs one pass: release a deleted request, or observe, plan and
// write the work, the views and the status.
func (r *StorageSiteDeploymentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	request := &v1.StorageSiteDeployment{}
	if err := r.Client.Get(ctx, req.NamespacedName, request); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	t := tag{label: DeploymentLabel, request: req.NamespacedName}
	if !request.DeletionTimestamp.IsZero() {
		// The work's Orphan option leaves everything it created on the site.
		work := deploymentWorkName(request.Namespace, request.Name)
		return ctrl.Result{}, release(ctx, r.Client, t, request, DeploymentFinalizer, request.Spec.Site, work)
	}
	if err := addFinalizer(ctx, r.Client, request, DeploymentFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	obs, views, err := r.observe(ctx, t, request)
	if err != nil {
		return ctrl.Result{}, err
	}
	plan, err := planDeployment(request, obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := plan.send(ctx, r.Client, t, request.Spec.Site, plan.status.Work, obs.work, views); err != nil {
		return ctrl.Result{}, err
	}
	// The hub keeps no clock of its own: transition times are the wall clock's.
	plan.status.Conditions = conditions.Merged(request.Status.Conditions, plan.status.Conditions, request.Generation, time.Now(), deploymentConditions)
	if err := writeStatus(ctx, r.Client, request, &request.Status, plan.status); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: plan.requeue}, nil
}

// observe reads the site, the request's work and its views.
func (r *StorageSiteDeploymentReconciler) observe(ctx context.Context, t tag, request *v1.StorageSiteDeployment) (
	deploymentObservation, map[string]*viewv1beta1.ManagedClusterView, error) {
	site := request.Spec.Site
	answer, err := checkSite(ctx, r.Client, site)
	if err != nil || answer != siteReady {
		return deploymentObservation{site: answer}, nil, err
	}
	work := deploymentWorkName(request.Namespace, request.Name)
	obs := deploymentObservation{site: siteReady}
	if obs.work, err = getWork(ctx, r.Client, site, work); err != nil {
		return obs, nil, err
	}
	if obs.siteMessage, err = r.siteTakenBy(ctx, t, site, obs.work); err != nil {
		return obs, nil, err
	}
	if obs.siteMessage != "" {
		obs.site = siteTaken
		return obs, nil, nil
	}
	views, err := readViews(ctx, r.Client, t, site)
	if err != nil {
		return obs, nil, err
	}
	obs.draft = project[v1.ClusterDeploymentConfig](views[draftViewName(work)])
	obs.cluster = project[v1.StorageCluster](views[clusterViewName(work)])
	obs.nodes = map[string]viewed[v1.StorageNode]{}
	for name, view := range views {
		if view.Spec.Scope.Kind == "StorageNode" {
			obs.nodes[name] = project[v1.StorageNode](view)
		}
	}
	return obs, views, nil
}

// siteTakenBy says which other request already deploys the site, if any: one
// request per site, and the first whose work exists keeps it. Two requests
// that both wrote a work (a race) are ordered by the works' age, then name.
func (r *StorageSiteDeploymentReconciler) siteTakenBy(ctx context.Context, t tag, site string, own *workv1.ManifestWork) (string, error) {
	var works workv1.ManifestWorkList
	if err := r.Client.List(ctx, &works, client.InNamespace(site), client.HasLabels{DeploymentLabel}); err != nil {
		return "", fmt.Errorf("failed to list the ManifestWorks of %s: %w", site, err)
	}
	others := slices.DeleteFunc(works.Items, func(w workv1.ManifestWork) bool {
		return w.Annotations[RequestAnnotation] == t.request.String() ||
			(own != nil && !olderWork(&w, own))
	})
	if len(others) == 0 {
		return "", nil
	}
	slices.SortFunc(others, func(a, b workv1.ManifestWork) int {
		if olderWork(&a, &b) {
			return -1
		}
		return 1
	})
	return fmt.Sprintf("the request %s already deploys the site %s (ManifestWork %s): one request per site, nothing is delivered",
		others[0].Annotations[RequestAnnotation], site, others[0].Name), nil
}

// olderWork orders works by creation, then name.
func olderWork(a, b *workv1.ManifestWork) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// SetupWithManager registers the reconciler; works and views map back to the
// request through the request annotation, and the requeue cadence covers the
// rest.
func (r *StorageSiteDeploymentReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return setupRequestController(mgr, &v1.StorageSiteDeployment{}, DeploymentLabel, "storagesitedeployment", r)
}
