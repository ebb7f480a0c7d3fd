package hub

import (
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// AddToScheme adds every kind the hub controllers read or write: baton's,
// OCM's ManifestWork and ManagedCluster, and ManagedClusterView.
func AddToScheme(scheme *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{v1.AddToScheme, workv1.Install, clusterv1.Install, viewv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("failed to build the hub's scheme: %w", err)
		}
	}
	return nil
}

// Registration says what Setup found and registered.
type Registration struct {
	// ManifestWorkServed: the API server serves work.open-cluster-management.io/v1
	// ManifestWorks, so this is an OCM hub and the controllers are registered.
	ManifestWorkServed bool
	// ViewsServed: it also serves ManagedClusterViews. Without them the
	// controllers deliver but cannot read a site back; their views fail to
	// be created, which their status reports.
	ViewsServed bool
}

// Served says whether the API server serves resource in groupVersion
// ("work.open-cluster-management.io/v1").
func Served(d discovery.DiscoveryInterface, groupVersion, resource string) (bool, error) {
	list, err := d.ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("failed to discover %s: %w", groupVersion, err)
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == resource }), nil
}

// Setup registers the hub's reconcilers with the manager, but only when the
// API server serves ManifestWorks: on a cluster that is not an OCM hub there
// is no transport to a site, and the controllers stay out.
func Setup(mgr ctrl.Manager, d discovery.DiscoveryInterface) (Registration, error) {
	var registration Registration
	var err error
	if registration.ManifestWorkServed, err = Served(d, workv1.GroupVersion.String(), "manifestworks"); err != nil {
		return registration, err
	}
	if !registration.ManifestWorkServed {
		return registration, nil
	}
	if registration.ViewsServed, err = Served(d, viewv1beta1.GroupVersion.String(), viewv1beta1.Resource); err != nil {
		return registration, err
	}
	if err := (&StorageSiteDeploymentReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return registration, fmt.Errorf("failed to register the StorageSiteDeployment controller: %w", err)
	}
	if err := (&SiteTestFailoverReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return registration, fmt.Errorf("failed to register the SiteTestFailover controller: %w", err)
	}
	return registration, nil
}
