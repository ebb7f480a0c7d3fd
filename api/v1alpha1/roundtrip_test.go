package v1alpha1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
)

// jsonHalves returns an object's spec and status as generic JSON values, so two
// objects of any kind compare field by field as the API server stores them.
func jsonHalves(t *testing.T, o client.Object) (spec, status any) {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m["spec"], m["status"]
}

// fresh returns an empty object of the same kind as o, named like it.
func fresh(o client.Object) client.Object {
	empty := reflect.New(reflect.TypeOf(o).Elem()).Interface().(client.Object)
	empty.SetName(o.GetName())
	empty.SetNamespace(o.GetNamespace())
	return empty
}

// TestValidObjectsRoundTrip creates a valid object of each kind, writes a valid
// status through the status subresource, and reads both back unchanged.
func TestValidObjectsRoundTrip(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c, "roundtrip")
	for _, f := range fixtures() {
		t.Run(f.kind, func(t *testing.T) {
			sent := createWithStatus(t, testContext(t), c, ns, f)
			got := readBack(t, c, sent)
			wantSpec, wantStatus := jsonHalves(t, sent)
			gotSpec, gotStatus := jsonHalves(t, got)
			if !reflect.DeepEqual(gotSpec, wantSpec) {
				t.Errorf("spec read back differs (-sent +read):\n%s", diff.Diff(wantSpec, gotSpec))
			}
			if !reflect.DeepEqual(gotStatus, wantStatus) {
				t.Errorf("status read back differs (-sent +read):\n%s", diff.Diff(wantStatus, gotStatus))
			}
			if wantStatus == nil {
				t.Error("the fixture's status is empty; the round trip proves nothing about status")
			}
		})
	}
}

// TestStatusIsASubresource checks, for each kind, that an update of the object
// does not change its status, and an update of the status does not change its
// spec (it is dropped, not refused) nor the generation.
func TestStatusIsASubresource(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c, "subresource")
	for _, f := range fixtures() {
		t.Run(f.kind, func(t *testing.T) {
			ctx := testContext(t)
			o := createWithStatus(t, ctx, c, ns, f)
			stored := readBack(t, c, o)
			_, storedStatus := jsonHalves(t, stored)

			// The object's update carries a changed status: the status stays.
			update := stored.DeepCopyObject().(client.Object)
			f.changeStatus(update)
			if f.changeSpec != nil {
				f.changeSpec(update)
			} else {
				update.SetLabels(map[string]string{"changed": "true"}) // an immutable spec: change metadata
			}
			if err := c.Update(ctx, update); err != nil {
				t.Fatalf("update: %v", err)
			}
			afterUpdate := readBack(t, c, o)
			if _, status := jsonHalves(t, afterUpdate); !reflect.DeepEqual(status, storedStatus) {
				t.Errorf("an update of the object changed its status (-before +after):\n%s", diff.Diff(storedStatus, status))
			}
			wantGeneration := stored.GetGeneration()
			if f.changeSpec != nil {
				wantGeneration++
				if spec, _ := jsonHalves(t, afterUpdate); !reflect.DeepEqual(spec, first(jsonHalves(t, update))) {
					t.Errorf("the spec change was not applied:\n%s", diff.Diff(first(jsonHalves(t, update)), spec))
				}
			}
			if afterUpdate.GetGeneration() != wantGeneration {
				t.Errorf("generation %d after the update, want %d", afterUpdate.GetGeneration(), wantGeneration)
			}

			// The status update carries a changed spec: the spec stays.
			statusUpdate := afterUpdate.DeepCopyObject().(client.Object)
			f.changeStatus(statusUpdate)
			if f.changeSpec != nil {
				f.changeSpec(statusUpdate)
			}
			changeAnySpec(t, statusUpdate)
			if err := c.Status().Update(ctx, statusUpdate); err != nil {
				t.Fatalf("status update: %v", err)
			}
			afterStatus := readBack(t, c, o)
			spec, status := jsonHalves(t, afterStatus)
			if want, _ := jsonHalves(t, afterUpdate); !reflect.DeepEqual(spec, want) {
				t.Errorf("a status update changed the spec (-before +after):\n%s", diff.Diff(want, spec))
			}
			if _, want := jsonHalves(t, statusUpdate); !reflect.DeepEqual(status, want) {
				t.Errorf("the status change was not applied (-sent +read):\n%s", diff.Diff(want, status))
			}
			if afterStatus.GetGeneration() != afterUpdate.GetGeneration() {
				t.Errorf("a status update moved the generation from %d to %d", afterUpdate.GetGeneration(), afterStatus.GetGeneration())
			}
		})
	}
}

func first(a, _ any) any { return a }

// changeAnySpec changes a spec field every kind's fixture sets, so even a kind
// whose spec is immutable tries to change it through the status subresource.
func changeAnySpec(t *testing.T, o client.Object) {
	t.Helper()
	switch o := o.(type) {
	case *v1.StorageCluster:
		o.Spec.Pool.Name = "elsewhere"
	case *v1.StorageNode:
		o.Spec.NodeName = "elsewhere"
	case *v1.Volume:
		o.Spec.PlaceCount = 3
	case *v1.Snapshot:
		o.Spec.SnapshotName = "elsewhere"
	case *v1.Replica:
		o.Spec.PlaceCount = 3
	case *v1.Replication:
		o.Spec.Enabled = false
	case *v1.OperatorOps:
		o.Spec.NodeNames = []string{"elsewhere"}
	case *v1.ClusterDeploymentConfig:
		o.Spec.NodeSets[0].Nodes = []string{"elsewhere"}
	case *v1.TestFailover:
		o.Spec.PVCName = "elsewhere"
	case *v1.StorageSiteDeployment:
		o.Spec.Discovery.NodeNames = []string{"elsewhere"}
	case *v1.SiteTestFailover:
		o.Spec.Drill.PVCName = "elsewhere"
	default:
		t.Fatalf("no spec change for %T", o)
	}
}

// createWithStatus creates f's object in ns, named after its kind, and
// writes f's status through the status subresource: the state every round
// trip starts from.
func createWithStatus(t *testing.T, ctx context.Context, c client.Client, ns string, f fixture) client.Object {
	t.Helper()
	o := f.object()
	o.SetName(strings.ToLower(f.kind))
	o.SetNamespace(ns)
	if err := c.Create(ctx, o); err != nil {
		t.Fatalf("create: %v", err)
	}
	f.setStatus(o)
	if err := c.Status().Update(ctx, o); err != nil {
		t.Fatalf("status update: %v", err)
	}
	return o
}

func readBack(t *testing.T, c client.Client, o client.Object) client.Object {
	t.Helper()
	got := fresh(o)
	if err := c.Get(testContext(t), client.ObjectKeyFromObject(o), got); err != nil {
		t.Fatalf("get %s: %v", o.GetName(), err)
	}
	return got
}

// defaulted is a field the API server fills when a minimal object omits it.
type defaulted struct {
	kind string
	path string // as in the CRD schema: "spec.drbdPorts", "spec.devices[].type"
	want string // the JSON the server stores
}

// minimalObjects are each kind's smallest valid object, as JSON: what a person
// writes with kubectl, leaving every default to the server.
var minimalObjects = map[string]string{
	"StorageCluster": `{"spec":{"clusterID":"` + clusterA + `","pool":{"name":"baton"}}}`,
	"StorageNode":    `{"spec":{"cluster":"site-a","nodeName":"node-1","address":"10.0.0.11","devices":[{"path":"/dev/sdb"}]}}`,
	"Volume": `{"spec":{"volumeID":"` + volume1 + `","sizeBytes":1073741824,"placeCount":2,` +
		`"rootHandle":"` + handleA1 + `","generation":0}}`,
	"Snapshot": `{"spec":{"volume":"` + handleA1 + `","snapshotName":"baton-1"}}`,
	"Replica": `{"spec":{"source":"` + handleB2 + `","rootHandle":"` + handleA1 + `","sizeBytes":1073741824,` +
		`"placeCount":2,"volumeMode":"Block"}}`,
	"Replication":             `{"spec":{"sourceVolume":"` + handleA1 + `","targetCluster":"` + clusterB + `"}}`,
	"OperatorOps":             `{"spec":{}}`,
	"ClusterDeploymentConfig": `{"spec":{"sizing":{"clusterName":"site-a","pool":{"name":"baton"}}}}`,
	"TestFailover":            `{"spec":{"source":"pvc-5d2c7a4e","targetNamespace":"drill","pvcName":"bubble"}}`,
	"StorageSiteDeployment":   `{"spec":{"site":"site-a","sizing":{"clusterName":"site-a","pool":{"name":"baton"}}}}`,
	"SiteTestFailover":        `{"spec":{"site":"site-b","drill":{"source":"pvc-5d2c7a4e","targetNamespace":"drill","pvcName":"bubble"}}}`,
}

// layoutDefaults are the defaults of StorageLayout under a prefix: the
// StorageCluster's spec and the draft's sizing default alike.
func layoutDefaults(kind, prefix string) []defaulted {
	return []defaulted{
		{kind, prefix + "pool.provisioning", `"thin"`},
		{kind, prefix + "pool.backend", `"zfs-drbd"`},
		{kind, prefix + "placeCount", `2`},
		{kind, prefix + "drbdPorts", `{"max":7999,"min":7000}`},
		{kind, prefix + "drbdMinors", `{"max":49999,"min":1000}`},
		{kind, prefix + "replicationInterval", `"5m"`},
		{kind, prefix + "snapshotRetention", `3`},
		{kind, prefix + "pool.thinOvercommitPercent", `400`},
	}
}

func defaults() []defaulted {
	d := layoutDefaults("StorageCluster", "spec.")
	d = append(d, layoutDefaults("ClusterDeploymentConfig", "spec.sizing.")...)
	d = append(d, layoutDefaults("StorageSiteDeployment", "spec.sizing.")...)
	return append(d,
		defaulted{"ClusterDeploymentConfig", "spec.approved", `false`},
		defaulted{"StorageNode", "spec.devices[].type", `"Disk"`},
		defaulted{"Volume", "spec.provisioning", `"thin"`},
		defaulted{"Volume", "spec.volumeMode", `"Filesystem"`},
		defaulted{"Replication", "spec.interval", `"5m"`},
		defaulted{"Replication", "spec.retention", `3`},
		defaulted{"Replication", "spec.enabled", `true`},
		defaulted{"StorageSiteDeployment", "spec.approved", `false`},
		defaulted{"StorageSiteDeployment", "spec.siteNamespace", `"baton-system"`},
		defaulted{"SiteTestFailover", "spec.siteNamespace", `"baton-system"`},
	)
}

// TestDefaults creates each kind's minimal object and checks every default the
// schema declares (TestEveryValidationIsExercised checks none is left out).
func TestDefaults(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c, "defaults")
	ctx := testContext(t)
	stored := map[string]map[string]any{}
	for _, kind := range kinds {
		o := toUnstructured(t, kind, []byte(minimalObjects[kind]))
		o.SetName("minimal")
		o.SetNamespace(ns)
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("%s: create the minimal object: %v", kind, err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Fatal(err)
		}
		stored[kind] = got.Object
	}
	for _, d := range defaults() {
		got, err := lookup(stored[d.kind], d.path)
		if err != nil {
			t.Errorf("%s %s: %v", d.kind, d.path, err)
			continue
		}
		data, _ := json.Marshal(got)
		if string(data) != d.want {
			t.Errorf("%s %s defaulted to %s, want %s", d.kind, d.path, data, d.want)
		}
	}
}

// lookup follows a schema path ("spec.devices[].type") through an object,
// taking the first item of each list.
func lookup(object map[string]any, path string) (any, error) {
	var current any = object
	for _, part := range strings.Split(path, ".") {
		name, isList := strings.CutSuffix(part, "[]")
		m, ok := current.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is not an object", name)
		}
		if current, ok = m[name]; !ok {
			return nil, fmt.Errorf("%s is missing", name)
		}
		if isList {
			items, ok := current.([]any)
			if !ok || len(items) == 0 {
				return nil, fmt.Errorf("%s is not a non-empty list", name)
			}
			current = items[0]
		}
	}
	return current, nil
}

// toUnstructured turns a kind's JSON (without apiVersion and kind) into an
// object that goes to the server as written: no Go zero value is dropped or
// added on the way, which is how kubectl users and merge patches reach it.
func toUnstructured(t *testing.T, kind string, data []byte) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	m["apiVersion"] = v1.GroupVersion.String()
	m["kind"] = kind
	typed, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	o := &unstructured.Unstructured{}
	if err := o.UnmarshalJSON(typed); err != nil { // numbers become int64, as the client expects
		t.Fatalf("%s: %v", kind, err)
	}
	return o
}
