// Package v1beta1 holds the Go types of Open Cluster Management's
// ManagedClusterView (view.open-cluster-management.io/v1beta1): a namespaced
// object in a managed cluster's namespace on the hub whose status projects one
// object of that cluster back to the hub.
//
// The upstream types live in stolostron's multicloud-operators-foundation,
// whose modules the Go proxy here does not serve; these are written from its
// published API (ViewSpec.Scope, ViewStatus.Conditions and Result, the
// Processing condition and its reasons) and carry only what baton uses. The
// CRD beside the hub's tests is generated from them; in production the
// foundation's work-manager add-on installs its own and runs the view agent.
//
// +kubebuilder:object:generate=true
// +groupName=view.open-cluster-management.io
//
//go:generate go tool controller-gen object crd paths=. output:crd:artifacts:config=../../testdata/crds
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of ManagedClusterView.
	GroupVersion = schema.GroupVersion{Group: "view.open-cluster-management.io", Version: "v1beta1"}

	schemeBuilder = runtime.NewSchemeBuilder(func(s *runtime.Scheme) error {
		s.AddKnownTypes(GroupVersion, &ManagedClusterView{}, &ManagedClusterViewList{})
		metav1.AddToGroupVersion(s, GroupVersion)
		return nil
	})

	// AddToScheme adds ManagedClusterView and its list to a scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

// Resource is the plural resource name, as RBAC rules and discovery name it.
const Resource = "managedclusterviews"

var _ runtime.Object = &ManagedClusterView{}
