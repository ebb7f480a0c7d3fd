package feedback

import (
	"testing"

	workv1 "open-cluster-management.io/api/work/v1"
)

func TestValuesReadOneStringPerPathAndSkipTheRest(t *testing.T) {
	live := map[string]any{"status": map[string]any{
		"phase": "Ready",
		"count": int64(3),
		"nodes": []any{"a", "b"},
	}}
	rules := []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{
		{Name: "phase", Path: ".status.phase"},
		{Name: "missing", Path: ".status.nothing"},
		{Name: "number", Path: ".status.count"},
		{Name: "many", Path: ".status.nodes[*]"},
		{Name: "broken", Path: ".status[["},
	}}}
	values := Values(rules, live)
	if len(values) != 1 || values[0].Name != "phase" || *values[0].Value.String != "Ready" {
		t.Fatalf("got %+v, want only phase=Ready", values)
	}
}
