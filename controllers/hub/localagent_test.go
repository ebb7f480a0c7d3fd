package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/baton-dr/baton/controllers/hub/feedback"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// localAgent stands in for a site's work agent and view agent (in the
// envtest suite the hub and the site share one API server; the end-to-end
// test gives it the site's and uses it only for views): it applies each
// work's manifests with the work's update strategy -- a real server-side apply
// as the work's field manager, without force, for the draft -- evaluates the
// feedback JSONPaths as the agent does, and answers each view with the object
// it names. The API server's own refusals (CEL, conflicts) are what the work's
// status reports.
type localAgent struct {
	t    *testing.T
	hub  client.Client // works and views
	c    client.Client // the site's objects
	site string        // the site's namespace on the hub
}

func (a *localAgent) sync(ctx context.Context) {
	a.t.Helper()
	works := listIn[workv1.ManifestWorkList](ctx, a.t, a.hub, a.site).Items
	for i := range works {
		a.applyWork(ctx, &works[i])
	}
	a.answerViews(ctx)
}

// answerViews is the view agent's half alone.
func (a *localAgent) answerViews(ctx context.Context) {
	a.t.Helper()
	views := listIn[viewv1beta1.ManagedClusterViewList](ctx, a.t, a.hub, a.site).Items
	for i := range views {
		a.answer(ctx, &views[i])
	}
}

func (a *localAgent) applyWork(ctx context.Context, work *workv1.ManifestWork) {
	a.t.Helper()
	all := true
	var reports []workv1.ManifestCondition
	for ordinal, manifest := range work.Spec.Workload.Manifests {
		object := &unstructured.Unstructured{}
		if err := object.UnmarshalJSON(manifest.Raw); err != nil {
			a.t.Fatalf("manifest %d of %s: %v", ordinal, work.Name, err)
		}
		config := configFor(work, object)
		err := a.apply(ctx, object, config)
		all = all && err == nil
		reports = append(reports, a.report(ctx, int32(ordinal), object, config, err))
	}
	applied := metav1.Condition{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "AppliedManifestWorkComplete",
		Message: "Apply manifest work complete", ObservedGeneration: work.Generation}
	if !all {
		applied.Status, applied.Reason, applied.Message = metav1.ConditionFalse, "AppliedManifestWorkFailed", "Failed to apply manifest work"
	}
	meta.SetStatusCondition(&work.Status.Conditions, applied)
	work.Status.ResourceStatus.Manifests = reports
	if err := a.hub.Status().Update(ctx, work); err != nil {
		a.t.Fatalf("work status: %v", err)
	}
}

// configFor finds the manifest's config by name, namespace and group.
func configFor(work *workv1.ManifestWork, object *unstructured.Unstructured) *workv1.ManifestConfigOption {
	for i, config := range work.Spec.ManifestConfigs {
		id := config.ResourceIdentifier
		if id.Name == object.GetName() && id.Namespace == object.GetNamespace() && id.Group == object.GroupVersionKind().Group {
			return &work.Spec.ManifestConfigs[i]
		}
	}
	return nil
}

func (a *localAgent) apply(ctx context.Context, object *unstructured.Unstructured, config *workv1.ManifestConfigOption) error {
	if config != nil && config.UpdateStrategy != nil && config.UpdateStrategy.Type == workv1.UpdateStrategyTypeServerSideApply {
		ssa := config.UpdateStrategy.ServerSideApply
		options := []client.ApplyOption{client.FieldOwner(ssa.FieldManager)}
		if ssa.Force {
			options = append(options, client.ForceOwnership)
		}
		return a.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(object), options...)
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(object.GroupVersionKind())
	err := a.c.Get(ctx, client.ObjectKeyFromObject(object), existing)
	if apierrors.IsNotFound(err) {
		return a.c.Create(ctx, object, client.FieldOwner(workv1.DefaultFieldManager))
	}
	if err != nil {
		return err
	}
	object.SetResourceVersion(existing.GetResourceVersion())
	return a.c.Update(ctx, object, client.FieldOwner(workv1.DefaultFieldManager))
}

// report is the manifest's condition and the feedback of its JSONPaths.
func (a *localAgent) report(ctx context.Context, ordinal int32, object *unstructured.Unstructured,
	config *workv1.ManifestConfigOption, applyErr error) workv1.ManifestCondition {
	a.t.Helper()
	gvk := object.GroupVersionKind()
	mapping, err := a.c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		a.t.Fatal(err)
	}
	condition := metav1.Condition{Type: workv1.ManifestApplied, Status: metav1.ConditionTrue, Reason: workv1.AppliedManifestComplete,
		Message: "Apply manifest complete", LastTransitionTime: metav1.Now()}
	if applyErr != nil {
		condition.Status, condition.Reason, condition.Message = metav1.ConditionFalse, workv1.AppliedManifestFailed, applyErr.Error()
	}
	report := workv1.ManifestCondition{
		ResourceMeta: workv1.ManifestResourceMeta{Ordinal: ordinal, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
			Resource: mapping.Resource.Resource, Name: object.GetName(), Namespace: object.GetNamespace()},
		Conditions: []metav1.Condition{condition},
	}
	if config == nil || applyErr != nil {
		return report
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	if err := a.c.Get(ctx, client.ObjectKeyFromObject(object), live); err != nil {
		a.t.Fatal(err)
	}
	report.StatusFeedbacks.Values = append(report.StatusFeedbacks.Values, feedback.Values(config.FeedbackRules, live.Object)...)
	return report
}

// answer writes what the view agent would: the object, or the reason it
// could not be read.
func (a *localAgent) answer(ctx context.Context, view *viewv1beta1.ManagedClusterView) {
	a.t.Helper()
	scope := view.Spec.Scope
	object := &unstructured.Unstructured{}
	object.SetGroupVersionKind(schema.GroupVersionKind{Group: scope.Group, Version: scope.Version, Kind: scope.Kind})
	err := a.c.Get(ctx, client.ObjectKey{Namespace: scope.Namespace, Name: scope.Name}, object)
	condition := metav1.Condition{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue,
		Reason: viewv1beta1.ReasonGetResource, Message: "Watching resources successfully"}
	view.Status.Result = runtime.RawExtension{}
	if err != nil {
		condition.Status, condition.Reason = metav1.ConditionFalse, viewv1beta1.ReasonGetResourceFailed
		condition.Message = fmt.Sprintf("failed to get resource with err: %v", err)
	} else {
		raw, err := json.Marshal(object.Object)
		if err != nil {
			a.t.Fatal(err)
		}
		view.Status.Result = runtime.RawExtension{Raw: bytes.TrimSpace(raw)}
	}
	meta.SetStatusCondition(&view.Status.Conditions, condition)
	if err := a.hub.Status().Update(ctx, view); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		a.t.Fatalf("view status: %v", err)
	}
}
