package hub

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/baton-dr/baton/api/v1alpha1"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// viewIntervalSeconds is how often the view agent re-reads a site object. The
// hub reads the views every 15 s while a request is in progress, so a shorter
// interval than the agent's default (30 s) keeps the two cadences close.
const viewIntervalSeconds = 15

// viewState is what a view says about its object.
type viewState int

const (
	// viewAbsent: the view does not exist (yet).
	viewAbsent viewState = iota
	// viewWaiting: the agent has not answered for the current scope.
	viewWaiting
	// viewNotFound: the agent could not read the object (a missing object
	// included); the message says why.
	viewNotFound
	// viewFound: the result holds the object.
	viewFound
)

func (s viewState) String() string {
	switch s {
	case viewAbsent:
		return "Absent"
	case viewWaiting:
		return "Waiting"
	case viewNotFound:
		return "NotFound"
	case viewFound:
		return "Found"
	}
	return fmt.Sprintf("viewState(%d)", int(s))
}

// viewed is one site object as its view projects it.
type viewed[T any] struct {
	state   viewState
	object  *T
	message string
}

// viewWant is a view the hub wants: its name and scope.
type viewWant struct {
	name  string
	scope viewv1beta1.ViewScope
}

// siteScope is the scope of a view of one baton object on the site.
func siteScope(kind, resource, name, namespace string) viewv1beta1.ViewScope {
	return viewv1beta1.ViewScope{
		Group: storagev1alpha1.GroupVersion.Group, Version: storagev1alpha1.GroupVersion.Version,
		Kind: kind, Resource: resource, Name: name, Namespace: namespace,
		UpdateIntervalSeconds: viewIntervalSeconds,
	}
}

// project reads a view into a typed object. A result that is not the object
// the scope names (the agent has not caught up with a changed scope) counts
// as no answer yet, so a stale projection is never taken for the new object.
func project[T any](view *viewv1beta1.ManagedClusterView) viewed[T] {
	if view == nil {
		return viewed[T]{state: viewAbsent}
	}
	processing := meta.FindStatusCondition(view.Status.Conditions, viewv1beta1.ConditionViewProcessing)
	switch {
	case processing == nil:
		return viewed[T]{state: viewWaiting}
	case processing.Status != metav1.ConditionTrue:
		return viewed[T]{state: viewNotFound, message: processing.Message}
	case len(view.Status.Result.Raw) == 0:
		return viewed[T]{state: viewWaiting}
	}
	var identity metav1.PartialObjectMetadata
	if err := json.Unmarshal(view.Status.Result.Raw, &identity); err != nil {
		return viewed[T]{state: viewNotFound, message: fmt.Sprintf("the view's result is not an object: %v", err)}
	}
	scope := view.Spec.Scope
	if identity.Name != scope.Name || identity.Namespace != scope.Namespace || identity.Kind != scope.Kind {
		return viewed[T]{state: viewWaiting}
	}
	object := new(T)
	if err := json.Unmarshal(view.Status.Result.Raw, object); err != nil {
		return viewed[T]{state: viewNotFound, message: fmt.Sprintf("the view's result is not a %s: %v", scope.Kind, err)}
	}
	return viewed[T]{state: viewFound, object: object}
}
