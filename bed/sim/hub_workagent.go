package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/baton-dr/baton/controllers/hub/feedback"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/baton-dr/baton/reports"
)

// The work agent's double applies a ManifestWork's manifests onto the site's
// API server as OCM's agent does, to the extent the hub relies on it:
//
//   - It puts its finalizer on a work first, and releases a deleted work
//     (then drops the finalizer) only while it reaches the hub: a work
//     withdrawn during a partition stays terminating on the hub until then.
//   - Update strategy (the default): create the object, or write the
//     manifest's top-level fields over the live object's and merge its
//     labels and annotations, when they differ. Admission refuses what the
//     site's CRDs refuse (an OperatorOps whose spec changed).
//   - ServerSideApply strategy: the site API server's applyDraft, as the
//     work's field manager, forced or not (drafts only: nothing else is
//     applied server-side by the hub).
//   - Delete option: Orphan leaves what the work created, on the work's
//     deletion and when a manifest leaves the work; any other option deletes
//     it (foreground and background alike; no owner references to an
//     AppliedManifestWork are written).
//   - Status: per manifest (by identity, with its ordinal) Applied and
//     Available conditions and the status feedback of its JSONPaths (string
//     values only, as the hub reads them); the work's Applied and Available
//     conditions carry its generation. Written only when it changed.
//
// Every pass applies every manifest again (what is unchanged is not
// written), as the agent's resync repairs drift on the site.

// resources names the plural resource of the kinds the hub delivers.
var resources = map[string]string{
	"OperatorOps": "operatorops", "ClusterDeploymentConfig": "clusterdeploymentconfigs", "TestFailover": "testfailovers",
}

// resourceOf is a kind's plural resource.
func resourceOf(gvk schema.GroupVersionKind) string {
	if resource, ok := resources[gvk.Kind]; ok {
		return resource
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.Resource
}

// workDue says whether a work needs the agent: a generation it has not
// applied, a missing finalizer, or a deletion.
func (k *klusterlet) workDue(work *workv1.ManifestWork) bool {
	applied, ok := k.applied[work.Name]
	return !ok || applied.generation != work.Generation || !work.DeletionTimestamp.IsZero() ||
		!controllerutil.ContainsFinalizer(work, workv1.ManifestWorkFinalizer)
}

func (k *klusterlet) syncWorkNamed(name string) {
	work := &workv1.ManifestWork{}
	if k.hubGet(k.hubWork, "work", name, work) {
		k.syncWork(context.Background(), work)
	}
}

// syncWork applies one work and reports its status.
func (k *klusterlet) syncWork(ctx context.Context, work *workv1.ManifestWork) {
	w := k.hub.world
	if !work.DeletionTimestamp.IsZero() {
		k.release(ctx, work)
		return
	}
	if controllerutil.AddFinalizer(work, workv1.ManifestWorkFinalizer) {
		if err := k.hubWork.Update(ctx, work); err != nil {
			w.Sim.Logf("agent", "%s: finalizer of %s: %v", k.endpoint, work.Name, err)
			return
		}
	}
	previous, seen := k.applied[work.Name]
	if !seen || previous.generation != work.Generation {
		w.event(k.site.Name, reports.EventAction, "work agent applies %s generation %d", work.Name, work.Generation)
	}
	k.hub.checks.delivering(k, work)
	manifests, applied := k.applyManifests(ctx, work)
	if !orphans(work) {
		for _, r := range previous.resources {
			if !slices.Contains(applied, r) {
				k.deleteResource(ctx, work, r)
			}
		}
	}
	k.applied[work.Name] = appliedWork{generation: work.Generation, resources: applied}
	status := k.workStatus(work, manifests)
	if equality.Semantic.DeepEqual(status, work.Status) {
		return
	}
	work.Status = status
	if err := k.hubWork.Status().Update(ctx, work); err != nil {
		w.Sim.Logf("agent", "%s: status of %s: %v", k.endpoint, work.Name, err)
	}
}

func orphans(work *workv1.ManifestWork) bool {
	return work.Spec.DeleteOption != nil && work.Spec.DeleteOption.PropagationPolicy == workv1.DeletePropagationPolicyTypeOrphan
}

// release withdraws a deleted work: what it applied goes unless the work
// orphans it, then the finalizer.
func (k *klusterlet) release(ctx context.Context, work *workv1.ManifestWork) {
	w := k.hub.world
	if !orphans(work) {
		for _, r := range k.applied[work.Name].resources {
			k.deleteResource(ctx, work, r)
		}
	}
	delete(k.applied, work.Name)
	if controllerutil.RemoveFinalizer(work, workv1.ManifestWorkFinalizer) {
		if err := k.hubWork.Update(ctx, work); err != nil {
			w.Sim.Logf("agent", "%s: release %s: %v", k.endpoint, work.Name, err)
			return
		}
	}
	w.event(k.site.Name, reports.EventAction, "work agent released %s (orphaning: %v)", work.Name, orphans(work))
}

func (k *klusterlet) deleteResource(ctx context.Context, work *workv1.ManifestWork, r appliedResource) {
	o := &unstructured.Unstructured{}
	o.SetGroupVersionKind(r.gvk)
	o.SetNamespace(r.key.Namespace)
	o.SetName(r.key.Name)
	typed, err := k.typed(o)
	if err == nil {
		err = client.IgnoreNotFound(k.siteClient.Delete(ctx, typed))
	}
	if err != nil {
		k.hub.world.Sim.Logf("agent", "%s: delete %s %s of %s: %v", k.endpoint, r.gvk.Kind, r.key, work.Name, err)
	}
}

// applyManifests applies each manifest and reports on it.
func (k *klusterlet) applyManifests(ctx context.Context, work *workv1.ManifestWork) ([]workv1.ManifestCondition, []appliedResource) {
	var reports []workv1.ManifestCondition
	var applied []appliedResource
	for ordinal, manifest := range work.Spec.Workload.Manifests {
		object := &unstructured.Unstructured{}
		if err := object.UnmarshalJSON(manifest.Raw); err != nil {
			reports = append(reports, k.report(work, int32(ordinal), object, nil, err))
			continue
		}
		config := configOf(work, object)
		err := k.apply(ctx, object, config)
		if err == nil {
			applied = append(applied, appliedResource{gvk: object.GroupVersionKind(), key: client.ObjectKeyFromObject(object)})
		}
		reports = append(reports, k.report(work, int32(ordinal), object, config, err))
	}
	return reports, applied
}

// configOf finds a manifest's config by its resource identifier: group,
// resource, name and namespace. (A run and its draft share their name.)
func configOf(work *workv1.ManifestWork, object *unstructured.Unstructured) *workv1.ManifestConfigOption {
	for i, config := range work.Spec.ManifestConfigs {
		id := config.ResourceIdentifier
		if id.Name == object.GetName() && id.Namespace == object.GetNamespace() && id.Group == object.GroupVersionKind().Group &&
			id.Resource == resourceOf(object.GroupVersionKind()) {
			return &work.Spec.ManifestConfigs[i]
		}
	}
	return nil
}

// typed converts an object of the site's scheme into its Go type.
func (k *klusterlet) typed(object *unstructured.Unstructured) (client.Object, error) {
	o, err := k.site.api.scheme.New(object.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(object.Object, o); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return o.(client.Object), nil
}

func (k *klusterlet) apply(ctx context.Context, object *unstructured.Unstructured, config *workv1.ManifestConfigOption) error {
	if config != nil && config.UpdateStrategy != nil && config.UpdateStrategy.Type == workv1.UpdateStrategyTypeServerSideApply {
		if object.GetKind() != "ClusterDeploymentConfig" {
			return fmt.Errorf("bed/sim: the work agent's double applies only drafts server-side, not a %s", object.GetKind())
		}
		ssa := config.UpdateStrategy.ServerSideApply
		k.hub.checks.applyingDraft(k, object)
		return k.site.api.applyDraft(ctx, ssa.FieldManager, ssa.Force, object.Object)
	}
	desired, err := k.typed(object)
	if err != nil {
		return err
	}
	live := desired.DeepCopyObject().(client.Object)
	err = k.siteClient.Get(ctx, client.ObjectKeyFromObject(desired), live)
	if apierrors.IsNotFound(err) {
		return k.siteClient.Create(ctx, desired)
	}
	if err != nil {
		return err
	}
	merged, err := mergeManifest(live, object)
	if err != nil {
		return err
	}
	updated, err := k.typed(merged)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(updated, live) {
		return nil
	}
	return k.siteClient.Update(ctx, updated)
}

// mergeManifest is the live object with the manifest's top-level fields (not
// its metadata, never status) and its labels and annotations merged in.
func mergeManifest(live client.Object, manifest *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return nil, err
	}
	merged := &unstructured.Unstructured{Object: content}
	for field, value := range manifest.Object {
		if field != "apiVersion" && field != "kind" && field != "metadata" && field != "status" {
			merged.Object[field] = value
		}
	}
	merged.SetLabels(mergeStrings(merged.GetLabels(), manifest.GetLabels()))
	merged.SetAnnotations(mergeStrings(merged.GetAnnotations(), manifest.GetAnnotations()))
	merged.SetGroupVersionKind(manifest.GroupVersionKind())
	return merged, nil
}

func mergeStrings(live, manifest map[string]string) map[string]string {
	if len(manifest) == 0 {
		return live
	}
	out := map[string]string{}
	for k, v := range live {
		out[k] = v
	}
	for k, v := range manifest {
		out[k] = v
	}
	return out
}

// report is the agent's status of one manifest: Applied, Available and its
// feedback, keeping the transition times of conditions that did not change.
func (k *klusterlet) report(work *workv1.ManifestWork, ordinal int32, object *unstructured.Unstructured,
	config *workv1.ManifestConfigOption, applyErr error) workv1.ManifestCondition {
	gvk := object.GroupVersionKind()
	resource := resourceOf(gvk)
	condition := workv1.ManifestCondition{ResourceMeta: workv1.ManifestResourceMeta{Ordinal: ordinal, Group: gvk.Group,
		Version: gvk.Version, Kind: gvk.Kind, Resource: resource, Name: object.GetName(), Namespace: object.GetNamespace()}}
	for _, previous := range work.Status.ResourceStatus.Manifests {
		if previous.ResourceMeta == condition.ResourceMeta {
			condition.Conditions = slices.Clone(previous.Conditions)
		}
	}
	now := metav1.NewTime(k.hub.world.Sim.Now().Truncate(time.Second))
	applied := metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: workv1.AppliedManifestComplete,
		Message: "Apply manifest complete", LastTransitionTime: now}
	if applyErr != nil {
		applied.Status, applied.Reason, applied.Message = metav1.ConditionFalse, workv1.AppliedManifestFailed, applyErr.Error()
	}
	meta.SetStatusCondition(&condition.Conditions, applied)
	live := k.live(object)
	available := metav1.Condition{Type: workv1.ManifestAvailable, Status: metav1.ConditionTrue, Reason: "ResourceAvailable",
		Message: "Resource is available", LastTransitionTime: now}
	if live == nil {
		available.Status, available.Reason, available.Message = metav1.ConditionFalse, "ResourceNotAvailable", "Resource is not available"
	}
	meta.SetStatusCondition(&condition.Conditions, available)
	if config != nil && live != nil {
		condition.StatusFeedbacks.Values = append(condition.StatusFeedbacks.Values, feedback.Values(config.FeedbackRules, live.Object)...)
	}
	return condition
}

// live reads the object a manifest names on the site, or nil.
func (k *klusterlet) live(object *unstructured.Unstructured) *unstructured.Unstructured {
	if object.GetName() == "" || object.GroupVersionKind().Empty() {
		return nil
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(object.GroupVersionKind())
	if err := k.siteClient.Get(context.Background(), client.ObjectKeyFromObject(object), live); err != nil {
		return nil
	}
	return live
}

// workStatus is the work's status after a pass: its manifests' reports and
// its Applied and Available conditions at its generation.
func (k *klusterlet) workStatus(work *workv1.ManifestWork, manifests []workv1.ManifestCondition) workv1.ManifestWorkStatus {
	status := *work.Status.DeepCopy()
	status.ResourceStatus.Manifests = manifests
	allApplied, allAvailable := true, true
	for _, m := range manifests {
		allApplied = allApplied && meta.IsStatusConditionTrue(m.Conditions, workv1.ManifestApplied)
		allAvailable = allAvailable && meta.IsStatusConditionTrue(m.Conditions, workv1.ManifestAvailable)
	}
	now := metav1.NewTime(k.hub.world.Sim.Now().Truncate(time.Second))
	applied := metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete",
		Message: "Apply manifest work complete", ObservedGeneration: work.Generation, LastTransitionTime: now}
	if !allApplied {
		applied.Status, applied.Reason, applied.Message = metav1.ConditionFalse, "AppliedManifestWorkFailed", "Failed to apply manifest work"
	}
	available := metav1.Condition{Type: workv1.WorkAvailable, Status: metav1.ConditionTrue, Reason: "ResourcesAvailable",
		Message: "All resources are available", ObservedGeneration: work.Generation, LastTransitionTime: now}
	if !allAvailable {
		available.Status, available.Reason, available.Message = metav1.ConditionFalse, "ResourcesNotAvailable", "One or more resources are not available"
	}
	meta.SetStatusCondition(&status.Conditions, applied)
	meta.SetStatusCondition(&status.Conditions, available)
	return status
}
