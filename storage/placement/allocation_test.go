package placement

import (
	"reflect"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

func TestAllocationOfKernelConfig(t *testing.T) {
	shown := backend.ResourceConfig{Name: "pvc-1", Port: 7012, Minor: 1004, Nodes: []backend.ResourceNode{
		{Node: "c", NodeID: 2, Address: "10.0.0.3:7012"}, {Node: "a", NodeID: 0, Address: "10.0.0.1:7012"}, {Node: "b", NodeID: 5}}}
	want := Allocation{Resource: "pvc-1", Port: 7012, Minor: 1004, Replicas: []Replica{{"a", 0}, {"c", 2}, {"b", 5}}}
	got := AllocationOf(shown)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AllocationOf() = %+v, want %+v", got, want)
	}
	if id, ok := got.NodeID("b"); !ok || id != 5 {
		t.Errorf("NodeID(b) = %d, %v; want 5", id, ok)
	}
	if _, ok := got.NodeID("z"); ok {
		t.Errorf("NodeID(z) found a replica that does not exist")
	}
}

func TestLookup(t *testing.T) {
	a := newChecked(t, DefaultConfig())
	want := a.mustAllocate("pvc-1", "a")
	if got, ok := a.Lookup("pvc-1"); !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("Lookup(pvc-1) = %+v, %v; want %+v", got, ok, want)
	}
	if _, ok := a.Lookup("pvc-2"); ok {
		t.Errorf("Lookup(pvc-2) found a resource never allocated")
	}
}

func TestDecisionString(t *testing.T) {
	tests := []struct {
		decision Decision
		want     string
	}{
		{Decision{Action: ActionHoldTopUp, Reason: "1 of 2"}, "volume: HoldTopUp: 1 of 2"},
		{Decision{Node: "a", Action: ActionKeepFilesystem, Value: "xfs", Reason: "found"}, "a: KeepFilesystem: found"},
	}
	for _, tt := range tests {
		if got := tt.decision.String(); got != tt.want {
			t.Errorf("Decision.String() = %q, want %q", got, tt.want)
		}
	}
}
