package sim

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// apiServer is a simulated Kubernetes API server: controller-runtime's fake
// client, plus what a real server does that the fake does not and that the
// deployment flow relies on.
//
//   - metadata.generation is 1 on create and grows by one with every change
//     outside metadata and status (the hub tells a stale Applied condition of
//     its work from a current one by it); creationTimestamp is simulated time;
//     metadata.uid is set, distinct for every object the server created (a
//     drill's bubble is named after its TestFailover's).
//   - Admission: the CEL rules of the flow's CRDs, written out in Go
//     (admit). The fake runs no CEL and no OpenAPI validation; the rules the
//     hub and the site operator rely on are these, the rest is not checked.
//   - Field ownership of a draft's spec, and server-side apply onto it
//     (applyDraft): the fake's own apply round-trips the apply configuration
//     through the Go type, so "approved": false joins every apply and no
//     approval ever conflicts, which the real server refuses.
//   - Defaults: a PV's or a claim's volumeMode is Filesystem unless named
//     (defaultVolumeMode).
//   - Watches: every successful write is told to the watchers, in order, so
//     the simulation's controllers and agents wake on what they watch.
//
// Its clients are per user (client): a write without a field owner is
// recorded under the user's manager name, as a real server takes it from the
// client's user agent.
type apiServer struct {
	name   string // "hub", "site-a": for errors and the log
	clock  interface{ Now() time.Time }
	scheme *runtime.Scheme
	store  client.WithWatch // the fake, unwrapped
	// owners are the field managers of each draft's top-level spec fields.
	owners map[types.NamespacedName]map[string][]string
	// created counts the objects created, for their UIDs.
	created  uint64
	watchers []func(watchEvent)
	// fails, when set, may fail a request (the API-errors fault): before the
	// server acts, or after it committed a write whose answer is lost.
	fails func(verb string, resource schema.GroupResource, name string) (failure, bool)
}

// watchEvent is one write as a watch reports it: the object as written
// (before its deletion, for a delete).
type watchEvent struct {
	Kind    string
	Key     types.NamespacedName
	Object  client.Object
	Deleted bool
}

func newAPIServer(name string, clock interface{ Now() time.Time }, scheme *runtime.Scheme, withStatus ...client.Object) *apiServer {
	// A plain object tracker: the fake's own field management is of no use
	// here (see applyDraft) and costs a third of every write.
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	return &apiServer{name: name, clock: clock, scheme: scheme, owners: map[types.NamespacedName]map[string][]string{},
		store: fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker).WithStatusSubresource(withStatus...).Build()}
}

// watch adds a watcher of every write.
func (a *apiServer) watch(f func(watchEvent)) { a.watchers = append(a.watchers, f) }

// client is the API server as one user reaches it.
func (a *apiServer) client(manager string) client.Client {
	return interceptor.NewClient(a.store, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			return a.serve("get", obj, key.Name, func() error { return c.Get(ctx, key, obj, opts...) })
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return a.serve("list", list, "", func() error { return c.List(ctx, list, opts...) })
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return a.serve("create", obj, obj.GetName(), func() error { return a.create(ctx, c, manager, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return a.serve("update", obj, obj.GetName(), func() error { return a.update(ctx, c, manager, obj, opts...) })
		},
		Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return fmt.Errorf("bed/sim: the simulated API server %s does not patch a main resource (nothing in the flow does)", a.name)
		},
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return fmt.Errorf("bed/sim: the simulated API server %s applies only drafts, through applyDraft", a.name)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return a.serve("delete", obj, obj.GetName(), func() error {
				if err := c.Delete(ctx, obj, opts...); err != nil {
					return err
				}
				a.notify(obj, true)
				return nil
			})
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return a.serve("update", obj, obj.GetName(), func() error {
				if err := c.SubResource(sub).Update(ctx, obj, opts...); err != nil {
					return err
				}
				a.notify(obj, false)
				return nil
			})
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return a.serve("patch", obj, obj.GetName(), func() error {
				if err := c.SubResource(sub).Patch(ctx, obj, patch, opts...); err != nil {
					return err
				}
				a.notify(obj, false)
				return nil
			})
		},
	})
}

// serve runs one request, unless the API-errors fault fails it: before it
// runs, or after it ran (its answer lost).
func (a *apiServer) serve(verb string, obj runtime.Object, name string, request func() error) error {
	if a.fails == nil {
		return request()
	}
	resource := schema.GroupResource{Group: v1.GroupVersion.Group}
	if gvk, err := apiutil.GVKForObject(obj, a.scheme); err == nil {
		resource = schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(strings.TrimSuffix(gvk.Kind, "List")) + "s"}
	}
	failed, ok := a.fails(verb, resource, name)
	if !ok {
		return request()
	}
	if failed.after {
		if err := request(); err != nil {
			return err
		}
	}
	return failed.err
}

func (a *apiServer) create(ctx context.Context, c client.WithWatch, manager string, obj client.Object, opts ...client.CreateOption) error {
	options := (&client.CreateOptions{}).ApplyOptions(opts)
	if err := a.admit(nil, obj); err != nil {
		return err
	}
	if len(options.DryRun) > 0 {
		return c.Create(ctx, obj, opts...)
	}
	obj.SetGeneration(1)
	obj.SetCreationTimestamp(metav1.NewTime(a.clock.Now().Truncate(time.Second)))
	a.created++
	obj.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", a.created)))
	defaultVolumeMode(obj)
	if err := c.Create(ctx, obj, opts...); err != nil {
		return err
	}
	a.wrote(nil, obj, manager, options.FieldManager)
	return nil
}

func (a *apiServer) update(ctx context.Context, c client.WithWatch, manager string, obj client.Object, opts ...client.UpdateOption) error {
	options := (&client.UpdateOptions{}).ApplyOptions(opts)
	old := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), old); err != nil {
		return err
	}
	if err := a.admit(old, obj); err != nil {
		return err
	}
	if len(options.DryRun) > 0 {
		return c.Update(ctx, obj, opts...)
	}
	changed, err := specChanged(old, obj)
	if err != nil {
		return err
	}
	obj.SetGeneration(old.GetGeneration())
	if changed {
		obj.SetGeneration(old.GetGeneration() + 1)
	}
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	if err := c.Update(ctx, obj, opts...); err != nil {
		return err
	}
	a.wrote(old, obj, manager, options.FieldManager)
	return nil
}

// wrote records a create (old nil) or update that went through: who owns
// the fields it set, the request's field manager before the client's, and the
// watchers' event.
func (a *apiServer) wrote(old, obj client.Object, manager, fieldManager string) {
	if fieldManager != "" {
		manager = fieldManager
	}
	a.own(old, obj, manager)
	a.notify(obj, false)
}

func (a *apiServer) notify(obj client.Object, deleted bool) {
	gvk, err := apiutil.GVKForObject(obj, a.scheme)
	if err != nil {
		panic(fmt.Sprintf("bed/sim: %s wrote a %T it cannot name: %v", a.name, obj, err))
	}
	if deleted {
		delete(a.owners, client.ObjectKeyFromObject(obj))
	}
	event := watchEvent{Kind: gvk.Kind, Key: client.ObjectKeyFromObject(obj), Object: obj, Deleted: deleted}
	for _, w := range a.watchers {
		w(event)
	}
}

// content is an object's fields outside metadata and status.
func content(obj client.Object) (map[string]any, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("bed/sim: %T: %w", obj, err)
	}
	for _, outside := range []string{"apiVersion", "kind", "metadata", "status"} {
		delete(u, outside)
	}
	return u, nil
}

func specChanged(old, updated client.Object) (bool, error) {
	before, err := content(old)
	if err != nil {
		return false, err
	}
	after, err := content(updated)
	if err != nil {
		return false, err
	}
	return !equality.Semantic.DeepEqual(before, after), nil
}

// specFields are the top-level fields of an object's spec as they would be
// serialised: what field ownership is tracked at.
func specFields(obj client.Object) (map[string]any, error) {
	c, err := content(obj)
	if err != nil {
		return nil, err
	}
	spec, _ := c["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	return spec, nil
}

// own records the field managers of a draft's spec after a create or update
// by manager: it owns every field it created, and every field it changed.
func (a *apiServer) own(old, updated client.Object, manager string) {
	if _, ok := updated.(*v1.ClusterDeploymentConfig); !ok {
		return
	}
	key := client.ObjectKeyFromObject(updated)
	after, err := specFields(updated)
	if err != nil {
		panic(err.Error())
	}
	if old == nil {
		owners := map[string][]string{}
		for f := range after {
			owners[f] = []string{manager}
		}
		a.owners[key] = owners
		return
	}
	before, err := specFields(old)
	if err != nil {
		panic(err.Error())
	}
	owners := a.owners[key]
	if owners == nil {
		owners = map[string][]string{}
		a.owners[key] = owners
	}
	for _, f := range slices.Sorted(maps.Keys(unionKeys(before, after))) {
		_, present := after[f]
		switch {
		case equality.Semantic.DeepEqual(before[f], after[f]):
		case present:
			owners[f] = []string{manager}
		default:
			delete(owners, f)
		}
	}
}

func unionKeys(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// managers returns who owns a draft's top-level spec field, sorted.
func (a *apiServer) managers(key types.NamespacedName, specField string) []string {
	return slices.Clone(a.owners[key][specField])
}

// applyDraft server-side applies an apply configuration of a draft (identity
// and spec fields) as manager, as the API server does at the granularity of
// the spec's top-level fields:
//
//   - a field another manager owns and the configuration sets to another
//     value is a conflict: refused without force; taken over with force;
//   - a field set to the value it has is shared with its owners;
//   - a field the manager owned and no longer applies is released, and
//     removed when nobody else owns it.
//
// A missing draft is created from the configuration. The result passes
// admission like any write. Simplifications: fields inside sizing are not
// owned one by one (sizing is one field), and metadata is not applied.
func (a *apiServer) applyDraft(ctx context.Context, manager string, force bool, config map[string]any) error {
	metadata, _ := config["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	namespace, _ := metadata["namespace"].(string)
	key := types.NamespacedName{Namespace: namespace, Name: name}
	applied, _ := config["spec"].(map[string]any)
	live := &v1.ClusterDeploymentConfig{}
	err := a.store.Get(ctx, key, live)
	if apierrors.IsNotFound(err) {
		created := &v1.ClusterDeploymentConfig{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(config, created); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		return a.create(ctx, a.store, manager, created)
	}
	if err != nil {
		return err
	}
	liveSpec, err := specFields(live)
	if err != nil {
		return err
	}
	owners := a.owners[key]
	spec, newOwners := maps.Clone(liveSpec), map[string][]string{}
	var causes []metav1.StatusCause
	for _, f := range slices.Sorted(maps.Keys(applied)) {
		others := slices.DeleteFunc(slices.Clone(owners[f]), func(m string) bool { return m == manager })
		equal := equality.Semantic.DeepEqual(liveSpec[f], applied[f])
		switch {
		case len(others) == 0 || force:
			newOwners[f] = []string{manager}
		case equal:
			newOwners[f] = slices.Sorted(slices.Values(append(others, manager)))
		default:
			for _, other := range others {
				causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict,
					Message: fmt.Sprintf("conflict with %q: .spec.%s", other, f), Field: ".spec." + f})
			}
		}
		spec[f] = applied[f]
	}
	if len(causes) > 0 {
		return apierrors.NewApplyConflict(causes, fmt.Sprintf("Apply failed with %d conflict(s)", len(causes)))
	}
	for _, f := range slices.Sorted(maps.Keys(owners)) {
		if _, ok := applied[f]; ok {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(owners[f]), func(m string) bool { return m == manager })
		if len(kept) == 0 {
			delete(spec, f) // released by its last owner: the field goes
			continue
		}
		newOwners[f] = kept
	}
	updated := live.DeepCopy()
	updated.Spec = v1.ClusterDeploymentConfigSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &updated.Spec); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if err := a.admit(live, updated); err != nil {
		return err
	}
	changed, err := specChanged(live, updated)
	if err != nil {
		return err
	}
	if !changed && equality.Semantic.DeepEqual(owners, newOwners) {
		return nil
	}
	if changed {
		updated.Generation = live.Generation + 1
	}
	if err := a.store.Update(ctx, updated); err != nil {
		return err
	}
	a.owners[key] = newOwners
	a.notify(updated, false)
	return nil
}

// admit checks a write against the CRDs' CEL rules the flow relies on; old is
// nil for a create. The messages are the CRDs'.
func (a *apiServer) admit(old, obj client.Object) error {
	var errs field.ErrorList
	switch o := obj.(type) {
	case *v1.ClusterDeploymentConfig:
		errs = admitDraft(asType[*v1.ClusterDeploymentConfig](old), o)
	case *v1.OperatorOps:
		if before := asType[*v1.OperatorOps](old); before != nil && !equality.Semantic.DeepEqual(before.Spec, o.Spec) {
			errs = append(errs, field.Invalid(field.NewPath("spec"), "object",
				"an OperatorOps spec is immutable: a changed discovery is a new OperatorOps (a new run)"))
		}
	case *v1.StorageSiteDeployment:
		errs = admitRequest(asType[*v1.StorageSiteDeployment](old), o)
	case *v1.StorageCluster:
		if before := asType[*v1.StorageCluster](old); before != nil && before.Spec.ClusterID != o.Spec.ClusterID {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterID"), "string", "clusterID is immutable"))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	gvk, _ := apiutil.GVKForObject(obj, a.scheme)
	return apierrors.NewInvalid(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, obj.GetName(), errs)
}

func asType[T client.Object](o client.Object) T {
	var zero T
	if o == nil {
		return zero
	}
	return o.(T)
}

func admitDraft(old, d *v1.ClusterDeploymentConfig) field.ErrorList {
	var errs field.ErrorList
	approved := field.NewPath("spec", "approved")
	if d.Spec.Approved && len(d.Spec.NodeSets) == 0 {
		errs = append(errs, field.Invalid(approved, "boolean", "a draft without node sets cannot be approved"))
	}
	if d.Spec.Approved && d.Spec.Sizing == nil {
		errs = append(errs, field.Invalid(approved, "boolean", "a draft without sizing cannot be approved"))
	}
	if old != nil && old.Spec.Approved && !d.Spec.Approved {
		errs = append(errs, field.Invalid(approved, "boolean", "approval is one-way: approved cannot go back to false"))
	}
	if old != nil && old.Spec.Approved && !equality.Semantic.DeepEqual(old.Spec, d.Spec) {
		errs = append(errs, field.Invalid(field.NewPath("spec"), "object", "an approved draft is frozen: a changed deployment is a new draft"))
	}
	return errs
}

func admitRequest(old, r *v1.StorageSiteDeployment) field.ErrorList {
	var errs field.ErrorList
	if r.Spec.Approved && r.Spec.Sizing == nil {
		errs = append(errs, field.Invalid(field.NewPath("spec", "approved"), "boolean", "a request without sizing cannot be approved"))
	}
	if old == nil {
		return errs
	}
	if old.Spec.Site != r.Spec.Site {
		errs = append(errs, field.Invalid(field.NewPath("spec", "site"), "string", "site is immutable: another site is another request"))
	}
	if old.Spec.SiteNamespace != r.Spec.SiteNamespace {
		errs = append(errs, field.Invalid(field.NewPath("spec", "siteNamespace"), "string", "siteNamespace is immutable"))
	}
	if old.Spec.Approved && !r.Spec.Approved {
		errs = append(errs, field.Invalid(field.NewPath("spec", "approved"), "boolean", "approval is one-way: approved cannot go back to false"))
	}
	if old.Spec.Approved && !equality.Semantic.DeepEqual(old.Spec, r.Spec) {
		errs = append(errs, field.Invalid(field.NewPath("spec"), "object", "an approved request is frozen: a changed deployment is a new request"))
	}
	return errs
}
