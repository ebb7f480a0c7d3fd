package v1alpha1_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/bed/controlplane/controlplanetest"
)

// kinds are the site operator's kinds, as the brief names them, and the hub's
// (SiteTestFailover, StorageSiteDeployment). A kind added to the API without a
// CRD (or a CRD without a kind) fails TestEveryCRDInstalls.
var kinds = []string{
	"ClusterDeploymentConfig", "OperatorOps", "Replica", "Replication", "SiteTestFailover", "Snapshot",
	"StorageCluster", "StorageNode", "StorageSiteDeployment", "TestFailover", "Volume",
}

// readCRDs parses every manifest in deploy/crds, keyed by kind.
func readCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(crdDirectory(), "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRD manifests in %s (%v); run make crds", crdDirectory(), err)
	}
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if want := crd.Spec.Group + "_" + crd.Spec.Names.Plural + ".yaml"; filepath.Base(file) != want {
			t.Errorf("%s holds %s, want it in %s", file, crd.Name, want)
		}
		crds[crd.Spec.Names.Kind] = crd
	}
	return crds
}

// registeredKinds are the kinds the package registers in a scheme, lists aside.
func registeredKinds(t *testing.T) []string {
	t.Helper()
	scheme := controlplanetest.Scheme(t, schemeKinds...)
	var registered []string
	for kind := range scheme.KnownTypes(v1.GroupVersion) {
		if strings.HasSuffix(kind, "List") || !strings.HasPrefix(scheme.KnownTypes(v1.GroupVersion)[kind].PkgPath(), "github.com/baton-dr/") {
			continue // lists, and the meta kinds (WatchEvent, options) every group carries
		}
		registered = append(registered, kind)
	}
	slices.Sort(registered)
	return registered
}

// TestEveryCRDInstalls checks that each kind has exactly one manifest, that the
// API server installed and serves every one, and that each is what the brief
// asks: namespaced, v1alpha1 served and stored, a status subresource, printer
// columns, in the "baton" category.
func TestEveryCRDInstalls(t *testing.T) {
	crds := readCRDs(t)
	if got := slices.Sorted(maps.Keys(crds)); !slices.Equal(got, kinds) {
		t.Errorf("deploy/crds holds the kinds %v, want %v", got, kinds)
	}
	if got := registeredKinds(t); !slices.Equal(got, kinds) {
		t.Errorf("AddToScheme registers the kinds %v, want %v", got, kinds)
	}

	c := apiServer(t)
	ctx := testContext(t)
	var installed apiextensionsv1.CustomResourceDefinitionList
	if err := c.List(ctx, &installed); err != nil {
		t.Fatal(err)
	}
	served := map[string]apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range installed.Items {
		if crd.Spec.Group == v1.GroupVersion.Group {
			served[crd.Spec.Names.Kind] = crd
		}
	}
	for _, kind := range kinds {
		crd, ok := served[kind]
		if !ok {
			t.Errorf("%s: not installed on the API server", kind)
			continue
		}
		checkCRD(t, crd)
		// The server serves the kind: an empty list in a fresh namespace.
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(v1.GroupVersion.WithKind(kind + "List"))
		if err := c.List(ctx, list, client.InNamespace("default")); err != nil {
			t.Errorf("%s: list: %v", kind, err)
		}
	}
}

func checkCRD(t *testing.T, crd apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	kind := crd.Spec.Names.Kind
	for _, want := range []apiextensionsv1.CustomResourceDefinitionConditionType{apiextensionsv1.Established, apiextensionsv1.NamesAccepted} {
		if !crdCondition(crd, want) {
			t.Errorf("%s: condition %s is not True: %+v", kind, want, crd.Status.Conditions)
		}
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("%s: scope %s, want Namespaced (the objects live in the operator's namespace)", kind, crd.Spec.Scope)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%s: %d versions, want v1alpha1 only", kind, len(crd.Spec.Versions))
	}
	version := crd.Spec.Versions[0]
	if version.Name != "v1alpha1" || !version.Served || !version.Storage {
		t.Errorf("%s: version %s served=%t storage=%t, want v1alpha1 served and stored", kind, version.Name, version.Served, version.Storage)
	}
	if version.Subresources == nil || version.Subresources.Status == nil {
		t.Errorf("%s: no status subresource", kind)
	}
	if len(version.AdditionalPrinterColumns) < 3 {
		t.Errorf("%s: %d printer columns, want at least 3", kind, len(version.AdditionalPrinterColumns))
	}
	if !slices.Contains(crd.Spec.Names.Categories, "baton") {
		t.Errorf("%s: categories %v lack baton (kubectl get baton)", kind, crd.Spec.Names.Categories)
	}
}

func crdCondition(crd apiextensionsv1.CustomResourceDefinition, conditionType apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == conditionType {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
