package hub

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// The I/O both hub controllers share: the site check, the work and the views
// in the site's namespace, and the mapping from those back to a request.

// tag is how the hub marks a request's objects in a site's namespace.
type tag struct {
	label   string // DeploymentLabel or TestFailoverLabel
	request types.NamespacedName
}

func (t tag) labels() map[string]string {
	return map[string]string{t.label: requestKey(t.request.Namespace, t.request.Name), ManagedByLabel: ManagedByValue}
}

func (t tag) annotations() map[string]string {
	return map[string]string{RequestAnnotation: t.request.String()}
}

// checkSite says whether the site is a ManagedCluster the hub accepted.
func checkSite(ctx context.Context, c client.Reader, site string) (siteAnswer, error) {
	cluster := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: site}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return siteNotFound, nil
		}
		return siteNotFound, fmt.Errorf("failed to get the ManagedCluster %s: %w", site, err)
	}
	if !cluster.Spec.HubAcceptsClient {
		return siteNotAccepted, nil
	}
	return siteReady, nil
}

// getWork returns the work, or nil when there is none.
func getWork(ctx context.Context, c client.Reader, namespace, name string) (*workv1.ManifestWork, error) {
	work := &workv1.ManifestWork{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, work); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to get the ManifestWork %s/%s: %w", namespace, name, err)
	}
	return work, nil
}

// writeWork creates the work, or updates it when it does not carry the spec
// with the given hash. An unchanged work is not written, so the agent is not
// asked to apply again what it applied.
func writeWork(ctx context.Context, c client.Client, t tag, existing *workv1.ManifestWork,
	namespace, name string, spec workv1.ManifestWorkSpec, hash string) error {
	if existing != nil && existing.Annotations[specHashAnnotation] == hash {
		return nil
	}
	work := existing
	if work == nil {
		work = &workv1.ManifestWork{}
		work.Namespace, work.Name = namespace, name
	}
	if work.Labels == nil {
		work.Labels = map[string]string{}
	}
	if work.Annotations == nil {
		work.Annotations = map[string]string{}
	}
	maps.Copy(work.Labels, t.labels())
	maps.Copy(work.Annotations, t.annotations())
	work.Annotations[specHashAnnotation] = hash
	work.Spec = spec
	if existing == nil {
		if err := c.Create(ctx, work); err != nil {
			return fmt.Errorf("failed to create the ManifestWork %s/%s: %w", namespace, name, err)
		}
		return nil
	}
	if err := c.Update(ctx, work); err != nil {
		return fmt.Errorf("failed to update the ManifestWork %s/%s: %w", namespace, name, err)
	}
	return nil
}

// delivery is what a pass of either request sends to the site: its work
// and its views.
type delivery struct {
	// deliver: write workSpec (with specHash) as the request's work.
	deliver  bool
	workSpec workv1.ManifestWorkSpec
	specHash string
	// syncViews: make the request's views exactly views.
	syncViews bool
	views     []viewWant
}

// send writes what d asks into the site's namespace: the work named work,
// where the pass found existing, and the views, where it found have.
func (d delivery) send(ctx context.Context, c client.Client, t tag, site, work string,
	existing *workv1.ManifestWork, have map[string]*viewv1beta1.ManagedClusterView) error {
	if d.deliver {
		if err := writeWork(ctx, c, t, existing, site, work, d.workSpec, d.specHash); err != nil {
			return err
		}
	}
	if !d.syncViews {
		return nil
	}
	return syncViews(ctx, c, t, site, d.views, have)
}

// writeStatus makes planned the request's status (status is the request's
// own field) and writes it as a merge patch; a status that did not change is
// not written.
func writeStatus[S any](ctx context.Context, c client.Client, request client.Object, status *S, planned S) error {
	if equality.Semantic.DeepEqual(*status, planned) {
		return nil
	}
	original := request.DeepCopyObject().(client.Object)
	*status = planned
	if err := c.Status().Patch(ctx, request, client.MergeFrom(original)); err != nil {
		return fmt.Errorf("failed to write the status: %w", err)
	}
	return nil
}

// readViews returns the request's views in the site's namespace, by name.
func readViews(ctx context.Context, c client.Reader, t tag, namespace string) (map[string]*viewv1beta1.ManagedClusterView, error) {
	var list viewv1beta1.ManagedClusterViewList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels(t.labels())); err != nil {
		return nil, fmt.Errorf("failed to list the ManagedClusterViews in %s: %w", namespace, err)
	}
	views := make(map[string]*viewv1beta1.ManagedClusterView, len(list.Items))
	for i := range list.Items {
		views[list.Items[i].Name] = &list.Items[i]
	}
	return views, nil
}

// syncViews makes the request's views exactly want: it creates the missing,
// re-scopes the changed and deletes the rest, in name order.
func syncViews(ctx context.Context, c client.Client, t tag, namespace string,
	want []viewWant, existing map[string]*viewv1beta1.ManagedClusterView) error {
	wanted := make(map[string]bool, len(want))
	for _, w := range want {
		wanted[w.name] = true
		view, ok := existing[w.name]
		switch {
		case !ok:
			view = &viewv1beta1.ManagedClusterView{Spec: viewv1beta1.ViewSpec{Scope: w.scope}}
			view.Namespace, view.Name = namespace, w.name
			view.Labels, view.Annotations = t.labels(), t.annotations()
			if err := c.Create(ctx, view); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("failed to create the ManagedClusterView %s/%s: %w", namespace, w.name, err)
			}
		case !equality.Semantic.DeepEqual(view.Spec.Scope, w.scope):
			view.Spec.Scope = w.scope
			if err := c.Update(ctx, view); err != nil {
				return fmt.Errorf("failed to re-scope the ManagedClusterView %s/%s: %w", namespace, w.name, err)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(existing)) {
		if wanted[name] {
			continue
		}
		if err := c.Delete(ctx, existing[name]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("failed to delete the ManagedClusterView %s/%s: %w", namespace, name, err)
		}
	}
	return nil
}

// releaseSite deletes the request's work and views in the site's namespace.
// What the work created on the site follows the work's delete option.
func releaseSite(ctx context.Context, c client.Client, t tag, namespace, work string) error {
	existing, err := getWork(ctx, c, namespace, work)
	if err != nil {
		return err
	}
	if existing != nil {
		if err := c.Delete(ctx, existing); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("failed to delete the ManifestWork %s/%s: %w", namespace, work, err)
		}
	}
	views, err := readViews(ctx, c, t, namespace)
	if err != nil {
		return err
	}
	return syncViews(ctx, c, t, namespace, nil, views)
}

// addFinalizer holds the request's deletion until release has run.
func addFinalizer(ctx context.Context, c client.Client, request client.Object, finalizer string) error {
	if controllerutil.AddFinalizer(request, finalizer) {
		if err := c.Update(ctx, request); err != nil {
			return fmt.Errorf("failed to add the finalizer: %w", err)
		}
	}
	return nil
}

// release runs once a request is deleted: it deletes the request's work and
// views on the site (releaseSite), then drops the finalizer.
func release(ctx context.Context, c client.Client, t tag, request client.Object, finalizer, site, work string) error {
	if !controllerutil.ContainsFinalizer(request, finalizer) {
		return nil
	}
	if err := releaseSite(ctx, c, t, site, work); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(request, finalizer)
	if err := c.Update(ctx, request); err != nil {
		return fmt.Errorf("failed to remove the finalizer: %w", err)
	}
	return nil
}

// setupRequestController registers r for a kind of request. Works and views
// cannot carry an owner reference to their request (another namespace), so
// their events map back through the request annotation (requestOf).
func setupRequestController(mgr ctrl.Manager, request client.Object, label, name string, r reconcile.Reconciler) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(request).
		Watches(&workv1.ManifestWork{}, handler.EnqueueRequestsFromMapFunc(requestOf(label))).
		Watches(&viewv1beta1.ManagedClusterView{}, handler.EnqueueRequestsFromMapFunc(requestOf(label))).
		Named(name).
		Complete(r)
}

// requestOf maps a work or view back to its request through its annotation;
// objects of the other controller (or of nobody) map to nothing.
func requestOf(label string) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		if _, ok := o.GetLabels()[label]; !ok {
			return nil
		}
		namespace, name, ok := strings.Cut(o.GetAnnotations()[RequestAnnotation], "/")
		if !ok || namespace == "" || name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}}
	}
}
