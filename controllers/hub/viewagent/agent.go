package viewagent

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// Reconciler answers the ManagedClusterViews its manager watches: the
// manager's cache holds the views of one cluster namespace on the hub (the
// agent's identity may read no other), and Site reads the managed cluster.
type Reconciler struct {
	// Hub reads the views and writes their status.
	Hub client.Client
	// Site reads the objects the views name, as the agent's identity on the
	// managed cluster (no cache: a view is one read every interval).
	Site client.Reader
	// Mapper resolves a scope's kind or resource on the managed cluster.
	Mapper meta.RESTMapper
	// Now stamps a condition that changes; nil is the wall clock.
	Now func() metav1.Time
}

// Reconcile answers one view and asks to be called again after its interval.
// A view whose answer did not change is not written: the status is rewritten
// only when the object, or the reason it cannot be read, changed.
func (r *Reconciler) Reconcile(ctx context.Context, request ctrl.Request) (ctrl.Result, error) {
	view := &viewv1beta1.ManagedClusterView{}
	if err := r.Hub.Get(ctx, request.NamespacedName, view); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !view.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	now := metav1.Now
	if r.Now != nil {
		now = r.Now
	}
	status := statusWith(view.Status, read(ctx, r.Site, r.Mapper, view.Spec.Scope), view.Generation, now())
	if !equality.Semantic.DeepEqual(status, view.Status) {
		view.Status = status
		if err := r.Hub.Status().Update(ctx, view); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, fmt.Errorf("failed to answer the ManagedClusterView %s: %w", request, err)
		}
	}
	return ctrl.Result{RequeueAfter: Interval(view.Spec.Scope)}, nil
}

// Interval is how often the agent answers a view again.
func Interval(scope viewv1beta1.ViewScope) time.Duration {
	seconds := scope.UpdateIntervalSeconds
	if seconds <= 0 {
		seconds = DefaultIntervalSeconds
	}
	return time.Duration(seconds) * time.Second
}

// SetupWithManager watches the views. Only a changed spec (a new view, a
// new scope) wakes the agent early: its own status writes do not, and the
// interval brings every view back.
func (r *Reconciler) SetupWithManager(m ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(m).Named("managedclusterview").
		For(&viewv1beta1.ManagedClusterView{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(r)
}
