package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// The view agent's double answers a ManagedClusterView as stolostron's
// work-manager add-on does: it reads the object the view's scope names on the
// site and writes it, whole, as the view's result with a Processing condition
// (or the reason it could not read it), when the scope is new and again every
// updateIntervalSeconds. A result is written only when it changed. It reads
// the site's API server directly, as the add-on does with its own
// credentials; the view's GVK must be one the site's scheme knows.

func (k *klusterlet) answerNamed(name string) {
	view := &viewv1beta1.ManagedClusterView{}
	if k.hubGet(k.hubView, "view", name, view) {
		k.answer(context.Background(), view)
	}
}

func (k *klusterlet) answer(ctx context.Context, view *viewv1beta1.ManagedClusterView) {
	w := k.hub.world
	scope := view.Spec.Scope
	object := &unstructured.Unstructured{}
	object.SetGroupVersionKind(schema.GroupVersionKind{Group: scope.Group, Version: scope.Version, Kind: scope.Kind})
	condition := metav1.Condition{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue,
		Reason: viewv1beta1.ReasonGetResource, Message: "Watching resources successfully",
		LastTransitionTime: metav1.NewTime(w.Sim.Now().Truncate(time.Second))}
	var result runtime.RawExtension
	err := k.readScope(ctx, object, scope.Namespace, scope.Name)
	if err == nil {
		var raw []byte
		if raw, err = json.Marshal(object.Object); err == nil {
			result = runtime.RawExtension{Raw: bytes.TrimSpace(raw)}
		}
	}
	if err != nil {
		condition.Status, condition.Reason = metav1.ConditionFalse, viewv1beta1.ReasonGetResourceFailed
		condition.Message = fmt.Sprintf("failed to get resource with err: %v", err)
	}
	k.answered[view.Name] = answeredView{generation: view.Generation, at: w.Sim.Now()}
	status := *view.Status.DeepCopy()
	status.Result = result
	meta.SetStatusCondition(&status.Conditions, condition)
	if equality.Semantic.DeepEqual(status, view.Status) {
		return
	}
	view.Status = status
	if err := k.hubView.Status().Update(ctx, view); err != nil && !apierrors.IsNotFound(err) {
		w.Sim.Logf("agent", "%s: view %s: %v", k.endpoint, view.Name, err)
	}
}

func (k *klusterlet) readScope(ctx context.Context, object *unstructured.Unstructured, namespace, name string) error {
	if !k.site.api.scheme.Recognizes(object.GroupVersionKind()) {
		return fmt.Errorf("the server could not find the requested resource %s", object.GroupVersionKind())
	}
	return k.siteClient.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, object)
}
