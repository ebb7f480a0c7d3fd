package v1alpha1_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestRefusals sends every case of the refusal table to the API server: the
// change must be refused as Invalid, naming the field and the rule, and leave
// the stored object exactly as it was. A case without a transition rule is also
// tried as a create, which must be refused and create nothing.
func TestRefusals(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c, "refusals")
	for i, r := range refusals() {
		name := fmt.Sprintf("%s/%s/%s", r.kind, r.field, r.rule)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			refuseUpdate(t, c, ns, fmt.Sprintf("update-%03d", i), r)
			if !r.status && !r.transition {
				refuseCreate(t, c, ns, fmt.Sprintf("create-%03d", i), r)
			}
		})
	}
}

func refuseUpdate(t *testing.T, c client.Client, ns, name string, r refusal) {
	ctx := testContext(t)
	o := fixtureOf(r.kind).object()
	o.SetName(name)
	o.SetNamespace(ns)
	if err := c.Create(ctx, o); err != nil {
		t.Fatalf("create the valid object: %v", err)
	}
	if r.setup != "" {
		if err := mergePatch(t, c, o, r.status, r.setup); err != nil {
			t.Fatalf("setup %s: %v", r.setup, err)
		}
	}
	before := readBack(t, c, o)
	err := mergePatch(t, c, o, r.status, r.patch)
	checkRefusal(t, err, r)
	after := readBack(t, c, o)
	if b, a := mustJSON(t, before), mustJSON(t, after); b != a {
		t.Errorf("the refused patch left a trace:\nbefore %s\nafter  %s", b, a)
	}
}

func refuseCreate(t *testing.T, c client.Client, ns, name string, r refusal) {
	ctx := testContext(t)
	var object, patch any
	if err := json.Unmarshal([]byte(mustJSON(t, fixtureOf(r.kind).object())), &object); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(r.patch), &patch); err != nil {
		t.Fatalf("patch %s: %v", r.patch, err)
	}
	data, err := json.Marshal(applyMergePatch(object, patch))
	if err != nil {
		t.Fatal(err)
	}
	o := toUnstructured(t, r.kind, data)
	o.SetName(name)
	o.SetNamespace(ns)
	checkRefusal(t, c.Create(ctx, o), r)
	if err := c.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()); !apierrors.IsNotFound(err) {
		t.Errorf("after the refused create, get = %v, want NotFound", err)
	}
}

// mergePatch sends a JSON merge patch to the object or its status.
func mergePatch(t *testing.T, c client.Client, o client.Object, toStatus bool, patch string) error {
	target := fresh(o)
	p := client.RawPatch(types.MergePatchType, []byte(patch))
	if toStatus {
		return c.Status().Patch(testContext(t), target, p)
	}
	return c.Patch(testContext(t), target, p)
}

// applyMergePatch applies a JSON merge patch (RFC 7386) to a decoded document.
func applyMergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for key, value := range p {
		if value == nil {
			delete(t, key)
			continue
		}
		t[key] = applyMergePatch(t[key], value)
	}
	return t
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// listIndex turns "spec.peers[0].id" into "spec.peers[].id".
var listIndex = regexp.MustCompile(`\[[0-9]+\]`)

// ruleText is what the API server's message says for each OpenAPI keyword; a
// CEL rule's message is its own text.
func ruleText(rule string) string {
	switch rule {
	case minimum:
		return "should be greater than or equal to"
	case maximum:
		return "should be less than or equal to"
	case pattern:
		return "should match"
	case enum:
		return "Unsupported value"
	case minLength:
		return "should be at least"
	case minItems:
		return "should have at least"
	}
	return rule
}

// checkRefusal asserts that err is an Invalid refusal with a cause that names
// the case's field and rule.
func checkRefusal(t *testing.T, err error, r refusal) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted %s, want it refused (%s: %s)", r.patch, r.field, r.rule)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("refused with %v (reason %s), want Invalid", err, apierrors.ReasonForError(err))
	}
	var causes []metav1.StatusCause
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
		causes = status.Status().Details.Causes
	}
	for _, cause := range causes {
		if listIndex.ReplaceAllString(cause.Field, "[]") == r.field && strings.Contains(cause.Message, ruleText(r.rule)) {
			return
		}
	}
	t.Errorf("no cause names %s with %q; the refusal was: %v", r.field, ruleText(r.rule), err)
}

// acceptance is a change the rules must let through: the refusals above are
// only worth something if the legitimate moves still work.
type acceptance struct {
	name   string
	kind   string
	status bool
	setup  string
	patch  string
	path   string // read back after the patch
	want   string // its JSON
}

var acceptances = []acceptance{
	{"a DRBD port is set once", "Volume", true, "", status(`{"drbdPort":7000}`), "status.drbdPort", `7000`},
	{"a DRBD port is re-written unchanged", "Volume", true, status(`{"drbdPort":7000,"drbdMinor":1000}`), status(`{"drbdPort":7000,"drbdMinor":1000,"state":"Active"}`), "status.drbdPort", `7000`},
	{"a volume becomes initialized", "Volume", true, "", status(`{"initialized":true}`), "status.initialized", `true`},
	{"the active end learns its successor", "Volume", true, status(`{"state":"Active"}`), status(`{"state":"Demoted","successor":"` + handleA3 + `"}`), "status.successor", `"` + handleA3 + `"`},
	{"a demoted member is reaped", "Volume", true, status(`{"state":"Demoted"}`), status(`{"state":"Tombstone"}`), "status.state", `"Tombstone"`},
	{"a volume grows", "Volume", false, "", spec(`{"sizeBytes":21474836480}`), "spec.sizeBytes", `21474836480`},
	{"a volume's placeCount changes", "Volume", false, "", spec(`{"placeCount":3}`), "spec.placeCount", `3`},
	{"a root member has no predecessor", "Volume", false, "", "", "spec.generation", `1`},
	{"a cluster learns a peer", "StorageCluster", false, "", spec(`{"peers":[{"id":"` + clusterB + `","endpoint":"https://b.example"},{"id":"` + clusterC + `","endpoint":"https://[fd00::c]:8443/api"}]}`), "spec.peers[].id", `"` + clusterB + `"`},
	{"a loop file with a size", "StorageNode", false, "", spec(`{"devices":[{"path":"/pool.img","type":"LoopFile","sizeBytes":1}]}`), "spec.devices[].sizeBytes", `1`},
	{"an IPv6 DRBD address", "StorageNode", false, "", spec(`{"address":"fd00::11"}`), "spec.address", `"fd00::11"`},
	{"a draft is approved", "ClusterDeploymentConfig", false, "", spec(`{"approved":true}`), "spec.approved", `true`},
	{"an approval is re-applied unchanged", "ClusterDeploymentConfig", false, spec(`{"approved":true}`), spec(`{"approved":true}`), "spec.approved", `true`},
	{"an approved draft's status moves on", "ClusterDeploymentConfig", true, "", status(`{"phase":"Deploying"}`), "status.phase", `"Deploying"`},
	{"a pairing is disabled (false is kept, not defaulted back)", "Replication", false, "", spec(`{"enabled":false}`), "spec.enabled", `false`},
	{"a pairing is re-aimed for fail-back", "Replication", false, "", spec(`{"failbackSource":"` + clusterC + `"}`), "spec.failbackSource", `"` + clusterC + `"`},
	{"a pairing's target changes", "Replication", false, "", spec(`{"targetCluster":"` + clusterC + `"}`), "spec.targetCluster", `"` + clusterC + `"`},
	{"a discovery run reports", "OperatorOps", true, "", status(`{"phase":"Running"}`), "status.phase", `"Running"`},
	{"a discovery run is labelled", "OperatorOps", false, "", `{"metadata":{"labels":{"site":"a"}}}`, "metadata.labels.site", `"a"`},
	{"a snapshot becomes ready", "Snapshot", true, "", status(`{"readyToUse":true}`), "status.readyToUse", `true`},
	{"a drill picks a snapshot", "TestFailover", false, "", spec(`{"snapshot":"baton-1"}`), "spec.snapshot", `"baton-1"`},
	{"a replica is failed over", "Replica", true, "", status(`{"clonedInto":"` + handleA3 + `"}`), "status.clonedInto", `"` + handleA3 + `"`},
	{"a failed-over replica is re-written unchanged", "Replica", true, status(`{"clonedInto":"` + handleA3 + `"}`), status(`{"clonedInto":"` + handleA3 + `","createdAt":"2026-10-03T12:00:00Z"}`), "status.clonedInto", `"` + handleA3 + `"`},
	{"a volume's CSI name is set once", "Volume", false, "", spec(`{"csiName":"pvc-1"}`), "spec.csiName", `"pvc-1"`},
	{"a record's instant keeps its nanoseconds", "Replication", true, "", status(`{"cycle":{"phase":"Idle","due":"2026-10-03T12:00:00.000000001Z"}}`), "status.cycle.due", `"2026-10-03T12:00:00.000000001Z"`},
	{"a request is approved", "StorageSiteDeployment", false, "", spec(`{"approved":true}`), "spec.approved", `true`},
	{"an approved request is re-applied unchanged", "StorageSiteDeployment", false, spec(`{"approved":true}`), spec(`{"approved":true}`), "spec.approved", `true`},
	{"a request's discovery changes before approval (a new run)", "StorageSiteDeployment", false, "", spec(`{"discovery":{"nodeNames":["node-4"]}}`), "spec.discovery.nodeNames", `["node-4"]`},
	{"a request's sizing changes before approval", "StorageSiteDeployment", false, "", sizing(`{"placeCount":3}`), "spec.sizing.placeCount", `3`},
	{"an approved request's status moves on", "StorageSiteDeployment", true, "", status(`{"phase":"Deploying"}`), "status.phase", `"Deploying"`},
	{"a hub drill picks a snapshot", "SiteTestFailover", false, "", drill(`{"snapshot":"baton-1"}`), "spec.drill.snapshot", `"baton-1"`},
}

// TestAcceptedChanges applies each legitimate change and reads it back.
func TestAcceptedChanges(t *testing.T) {
	c := apiServer(t)
	ns := newNamespace(t, c, "accepted")
	for i, a := range acceptances {
		t.Run(a.kind+"/"+a.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			o := fixtureOf(a.kind).object()
			o.SetName(fmt.Sprintf("case-%03d", i))
			o.SetNamespace(ns)
			if err := c.Create(ctx, o); err != nil {
				t.Fatalf("create: %v", err)
			}
			for _, p := range []string{a.setup, a.patch} {
				if p == "" {
					continue
				}
				if err := mergePatch(t, c, o, a.status, p); err != nil {
					t.Fatalf("patch %s refused: %v", p, err)
				}
			}
			var stored map[string]any
			if err := json.Unmarshal([]byte(mustJSON(t, readBack(t, c, o))), &stored); err != nil {
				t.Fatal(err)
			}
			got, err := lookup(stored, a.path)
			if err != nil {
				t.Fatalf("%s: %v", a.path, err)
			}
			if g := mustJSON(t, got); g != a.want {
				t.Errorf("%s = %s, want %s", a.path, g, a.want)
			}
		})
	}
}

// schemaRules walks a CRD's schema and returns every validation a refusal case
// must exercise, as "path rule" keys (the path where the API server reports the
// refusal), and every defaulted path. maxLength, maxItems and maxProperties are
// left out: they bound the cost of the CEL rules and the size of objects, and
// are not claims about the model. So is metav1.Condition, which is upstream's.
func schemaRules(crd *apiextensionsv1.CustomResourceDefinition) (rules, defaulted []string, problems []string) {
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps)
	join := func(path, name string) string {
		if path == "" || name == "" {
			return path + name
		}
		return path + "." + name
	}
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps) {
		add := func(present bool, rule string) {
			if present {
				rules = append(rules, path+" "+rule)
			}
		}
		add(s.Minimum != nil, minimum)
		add(s.Maximum != nil, maximum)
		add(s.Pattern != "", pattern)
		add(len(s.Enum) > 0, enum)
		add(s.MinLength != nil && *s.MinLength > 0, minLength)
		add(s.MinItems != nil && *s.MinItems > 0, minItems)
		if s.Default != nil {
			defaulted = append(defaulted, path)
		}
		for _, v := range s.XValidations {
			if v.Message == "" {
				problems = append(problems, fmt.Sprintf("%s: the rule %q has no message", path, v.Rule))
			}
			rules = append(rules, join(path, strings.TrimPrefix(v.FieldPath, "."))+" "+v.Message)
		}
		for name, property := range s.Properties {
			if (path == "" && name == "metadata") || name == "conditions" {
				continue
			}
			walk(join(path, name), &property)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", s.Items.Schema)
		}
	}
	walk("", crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	slices.Sort(rules)
	slices.Sort(defaulted)
	return rules, defaulted, problems
}

// TestEveryValidationIsExercised keeps the markers honest: every validation
// and every default in deploy/crds has a case in the refusal table (or the
// defaults table), and no case names a validation the schema lacks. It needs
// no API server; TestRefusals and TestDefaults prove the cases on one.
func TestEveryValidationIsExercised(t *testing.T) {
	crds := readCRDs(t)
	covered := map[string]map[string]bool{}
	for _, r := range refusals() {
		if covered[r.kind] == nil {
			covered[r.kind] = map[string]bool{}
		}
		covered[r.kind][r.field+" "+r.rule] = true
	}
	coveredDefaults := map[string]map[string]bool{}
	for _, d := range defaults() {
		if coveredDefaults[d.kind] == nil {
			coveredDefaults[d.kind] = map[string]bool{}
		}
		coveredDefaults[d.kind][d.path] = true
	}
	total := 0
	for _, kind := range kinds {
		rules, defaulted, problems := schemaRules(crds[kind])
		for _, p := range problems {
			t.Errorf("%s: %s", kind, p)
		}
		total += len(rules)
		declared := map[string]bool{}
		for _, rule := range rules {
			declared[rule] = true
			if !covered[kind][rule] {
				t.Errorf("%s: the validation %q has no refusal case", kind, rule)
			}
		}
		for rule := range covered[kind] {
			if !declared[rule] {
				t.Errorf("%s: the refusal case %q names a validation the schema lacks", kind, rule)
			}
		}
		for _, path := range defaulted {
			if !coveredDefaults[kind][path] {
				t.Errorf("%s: the default of %s is not checked by TestDefaults", kind, path)
			}
		}
		for path := range coveredDefaults[kind] {
			if !slices.Contains(defaulted, path) {
				t.Errorf("%s: TestDefaults checks %s, which the schema does not default", kind, path)
			}
		}
	}
	t.Logf("%d validations over %d kinds, %d refusal cases, %d defaults", total, len(kinds), len(refusals()), len(defaults()))
}
