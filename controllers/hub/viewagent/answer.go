// Package viewagent is baton's ManagedClusterView agent: it runs on a managed
// cluster, watches the ManagedClusterViews in that cluster's namespace on the
// hub, reads the one object each view's scope names from the managed
// cluster's API server, and writes it, whole, into the view's status with a
// Processing condition -- or the reason it could not read it -- when the
// scope is new and again every updateIntervalSeconds (30 by default).
//
// Why baton has one: the view agent of Open Cluster Management is the
// work-manager add-on of stolostron's multicloud-operators-foundation, whose
// modules and images cannot be had here. This is the smallest agent that
// answers the views the hub controllers write (controllers/hub), with the
// same status (view/v1beta1) the add-on writes. What it does not do: the
// add-on's registration (it uses the klusterlet's hub identity, which the hub
// must allow to read and answer views in the cluster's namespace), views of
// lists, and the add-on's other APIs (ManagedClusterActions, cluster info).
// What it reads is bounded by its identity on the managed cluster: a view of
// an object it may not get is answered with the API server's refusal.
package viewagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// DefaultIntervalSeconds is how often a view is answered again when its
// scope names no interval (the add-on's default).
const DefaultIntervalSeconds = 30

// answer is what the agent writes for one scope: the object, or no result
// and a Processing condition saying why.
type answer struct {
	result    runtime.RawExtension
	condition metav1.Condition
}

// resolve finds the kind a scope names: its kind (the version defaulted to
// the group's preferred one), or else the kind of its resource.
func resolve(mapper meta.RESTMapper, scope viewv1beta1.ViewScope) (schema.GroupVersionKind, string, string) {
	switch {
	case scope.Name == "":
		return schema.GroupVersionKind{}, viewv1beta1.ReasonResourceNameInvalid, "the scope names no object"
	case scope.Kind != "":
		mapping, err := mapper.RESTMapping(schema.GroupKind{Group: scope.Group, Kind: scope.Kind}, versions(scope.Version)...)
		if err != nil {
			return schema.GroupVersionKind{}, viewv1beta1.ReasonResourceGVKInvalid, fmt.Sprintf("failed to find the kind %s: %v", scopeKind(scope), err)
		}
		return mapping.GroupVersionKind, "", ""
	case scope.Resource != "":
		gvk, err := mapper.KindFor(schema.GroupVersionResource{Group: scope.Group, Version: scope.Version, Resource: scope.Resource})
		if err != nil {
			return schema.GroupVersionKind{}, viewv1beta1.ReasonResourceGVKInvalid, fmt.Sprintf("failed to find the resource %s: %v", scope.Resource, err)
		}
		return gvk, "", ""
	}
	return schema.GroupVersionKind{}, viewv1beta1.ReasonResourceTypeInvalid, "the scope names neither a kind nor a resource"
}

func versions(version string) []string {
	if version == "" {
		return nil
	}
	return []string{version}
}

func scopeKind(scope viewv1beta1.ViewScope) string {
	return schema.GroupVersionKind{Group: scope.Group, Version: scope.Version, Kind: scope.Kind}.String()
}

// read answers a scope from the managed cluster.
func read(ctx context.Context, site client.Reader, mapper meta.RESTMapper, scope viewv1beta1.ViewScope) answer {
	failed := func(reason, message string) answer {
		return answer{condition: metav1.Condition{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionFalse,
			Reason: reason, Message: message}}
	}
	gvk, reason, message := resolve(mapper, scope)
	if reason != "" {
		return failed(reason, message)
	}
	object := &unstructured.Unstructured{}
	object.SetGroupVersionKind(gvk)
	if err := site.Get(ctx, client.ObjectKey{Namespace: scope.Namespace, Name: scope.Name}, object); err != nil {
		return failed(viewv1beta1.ReasonGetResourceFailed, fmt.Sprintf("failed to get resource with err: %v", err))
	}
	raw, err := json.Marshal(object.Object)
	if err != nil {
		return failed(viewv1beta1.ReasonGetResourceFailed, fmt.Sprintf("failed to encode the resource: %v", err))
	}
	return answer{result: runtime.RawExtension{Raw: bytes.TrimSpace(raw)},
		condition: metav1.Condition{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue,
			Reason: viewv1beta1.ReasonGetResource, Message: "Watching resources successfully"}}
}

// statusWith is the view's status once the answer is in: the result
// replaced, the condition merged (its transition time kept while its status
// holds). now stamps a condition that changes.
func statusWith(current viewv1beta1.ViewStatus, a answer, generation int64, now metav1.Time) viewv1beta1.ViewStatus {
	status := *current.DeepCopy()
	status.Result = a.result
	condition := a.condition
	condition.ObservedGeneration = generation
	condition.LastTransitionTime = now
	meta.SetStatusCondition(&status.Conditions, condition)
	return status
}
