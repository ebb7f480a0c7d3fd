package hub

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
)

// TestSetupRegistersOnlyOnAnOCMHub: without ManifestWorks there is no
// transport to a site, so nothing is registered; with them both controllers
// are, and a missing view API is reported, not fatal.
func TestSetupRegistersOnlyOnAnOCMHub(t *testing.T) {
	works := &metav1.APIResourceList{GroupVersion: workv1.GroupVersion.String(),
		APIResources: []metav1.APIResource{{Name: "manifestworks", Namespaced: true, Kind: "ManifestWork"}}}
	views := &metav1.APIResourceList{GroupVersion: viewv1beta1.GroupVersion.String(),
		APIResources: []metav1.APIResource{{Name: viewv1beta1.Resource, Namespaced: true, Kind: "ManagedClusterView"}}}
	skip := true
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		want      Registration
	}{
		{"not a hub", nil, Registration{}},
		{"a hub without views", []*metav1.APIResourceList{works}, Registration{ManifestWorkServed: true}},
		{"a hub with views", []*metav1.APIResourceList{works, views}, Registration{ManifestWorkServed: true, ViewsServed: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tc.resources}}
			manager, err := ctrl.NewManager(&rest.Config{Host: "https://hub.invalid"}, ctrl.Options{Scheme: newScheme(t),
				// Each case registers the same controllers in one process.
				Controller: config.Controller{SkipNameValidation: &skip}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Setup(manager, d)
			if err != nil || got != tc.want {
				t.Errorf("Setup = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
