package hub

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/controllers/conditions"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

var testFailoverConditions = []string{v1.SiteTestFailoverDeliveredCondition, v1.SiteTestFailoverReadyCondition}

// The reconciler's permissions, from which deploy/hub/rbac is generated.
// +kubebuilder:rbac:groups=storage.baton.dev,resources=sitetestfailovers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=storage.baton.dev,resources=sitetestfailovers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=storage.baton.dev,resources=sitetestfailovers/finalizers,verbs=update

// SiteTestFailoverReconciler delivers a drill to the DR site through a
// ManifestWork and projects the site's TestFailover back through a view.
type SiteTestFailoverReconciler struct {
	Client client.Client
}

// Reconcile runs one pass of a drill.
func (r *SiteTestFailoverReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	request := &v1.SiteTestFailover{}
	if err := r.Client.Get(ctx, req.NamespacedName, request); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	t := tag{label: TestFailoverLabel, request: req.NamespacedName}
	work := testFailoverWorkName(request.Namespace, request.Name)
	if !request.DeletionTimestamp.IsZero() {
		// Foreground: the agent deletes the site's TestFailover, whose
		// finalizer removes the bubble.
		return ctrl.Result{}, release(ctx, r.Client, t, request, TestFailoverFinalizer, request.Spec.Site, work)
	}
	if err := addFinalizer(ctx, r.Client, request, TestFailoverFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	obs, views, err := r.observe(ctx, t, request, work)
	if err != nil {
		return ctrl.Result{}, err
	}
	plan, err := planTestFailover(request, obs)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := plan.send(ctx, r.Client, t, request.Spec.Site, work, obs.work, views); err != nil {
		return ctrl.Result{}, err
	}
	plan.status.Conditions = conditions.Merged(request.Status.Conditions, plan.status.Conditions, request.Generation, time.Now(), testFailoverConditions)
	if err := writeStatus(ctx, r.Client, request, &request.Status, plan.status); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: plan.requeue}, nil
}

func (r *SiteTestFailoverReconciler) observe(ctx context.Context, t tag, request *v1.SiteTestFailover, work string) (
	testFailoverObservation, map[string]*viewv1beta1.ManagedClusterView, error) {
	answer, err := checkSite(ctx, r.Client, request.Spec.Site)
	if err != nil || answer != siteReady {
		return testFailoverObservation{site: answer}, nil, err
	}
	obs := testFailoverObservation{site: siteReady}
	if obs.work, err = getWork(ctx, r.Client, request.Spec.Site, work); err != nil {
		return obs, nil, err
	}
	views, err := readViews(ctx, r.Client, t, request.Spec.Site)
	if err != nil {
		return obs, nil, err
	}
	obs.drill = project[v1.TestFailover](views[drillViewName(work)])
	return obs, views, nil
}

// SetupWithManager registers the reconciler; works and views map back to the
// drill through the request annotation.
func (r *SiteTestFailoverReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return setupRequestController(mgr, &v1.SiteTestFailover{}, TestFailoverLabel, "sitetestfailover", r)
}
