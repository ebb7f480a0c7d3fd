// Package controlplanetest gives a test a real control plane (controlplane)
// for its duration, and fills it from YAML manifests.
package controlplanetest

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/bed/controlplane"
)

// Start starts a control plane with the CRDs of crdDirectories (files or
// directories) installed, and stops it when the test ends.
func Start(t testing.TB, crdDirectories ...string) *rest.Config {
	t.Helper()
	cp, err := controlplane.Start(controlplane.Options{CRDDirectories: crdDirectories})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stop the control plane: %v", err)
		}
	})
	return cp.Config
}

// Apply creates every object of a multi-document YAML file; one that exists
// already is left as it is.
func Apply(t testing.TB, ctx context.Context, c client.Client, file string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	decoder := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		object := &unstructured.Unstructured{}
		if err := decoder.Decode(&object.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(object.Object) == 0 {
			continue
		}
		if err := c.Create(ctx, object); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: create %s %s: %v", file, object.GetKind(), object.GetName(), err)
		}
	}
}
