package placement

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// checkedAllocator runs checkInvariants around every step and asserts that a
// refused step changed nothing.
type checkedAllocator struct {
	t      *testing.T
	config Config
	*Allocator
}

func newChecked(t *testing.T, config Config, records ...Allocation) *checkedAllocator {
	t.Helper()
	a, err := NewAllocator(config, records)
	if err != nil {
		t.Fatalf("NewAllocator() error = %v", err)
	}
	return &checkedAllocator{t: t, config: config, Allocator: a}
}

func (c *checkedAllocator) step(adopted string, do func() error) error {
	c.t.Helper()
	before := c.Snapshot()
	err := do()
	after := c.Snapshot()
	kept := []Allocation{}
	for _, b := range before {
		if b.Resource != adopted {
			kept = append(kept, b)
		}
	}
	if problems := checkInvariants(c.config, kept, after); problems != nil {
		c.t.Fatalf("step broke invariants: %v", problems)
	}
	if err != nil && !reflect.DeepEqual(before, after) {
		c.t.Fatalf("refused step (%v) changed the allocations:\nbefore %v\nafter  %v", err, before, after)
	}
	return err
}

func (c *checkedAllocator) allocate(resource string, nodes ...string) (Allocation, error) {
	c.t.Helper()
	var got Allocation
	err := c.step("", func() (err error) { got, err = c.Allocate(resource, nodes); return err })
	return got, err
}

func (c *checkedAllocator) mustAllocate(resource string, nodes ...string) Allocation {
	c.t.Helper()
	got, err := c.allocate(resource, nodes...)
	if err != nil {
		c.t.Fatalf("Allocate(%q, %q) error = %v", resource, nodes, err)
	}
	return got
}

func (c *checkedAllocator) adopt(live Allocation) (Allocation, error) {
	c.t.Helper()
	var got Allocation
	err := c.step(live.Resource, func() (err error) { got, err = c.Adopt(live); return err })
	return got, err
}

func (c *checkedAllocator) removeReplica(resource, node string) {
	c.t.Helper()
	_ = c.step("", func() error { c.RemoveReplica(resource, node); return nil })
}

func (c *checkedAllocator) release(resource string) {
	c.t.Helper()
	_ = c.step("", func() error { c.Release(resource); return nil })
}

func alloc(resource string, port uint16, minor uint32, nodes ...string) Allocation {
	a := Allocation{Resource: resource, Port: port, Minor: minor}
	for i, n := range nodes {
		a.Replicas = append(a.Replicas, Replica{Node: n, NodeID: uint8(i)})
	}
	return a
}

func narrow(firstPort, lastPort uint16, firstMinor, lastMinor uint32) Ranges {
	return Ranges{FirstPort: firstPort, LastPort: lastPort, FirstMinor: firstMinor, LastMinor: lastMinor}
}

func TestAllocateNewResources(t *testing.T) {
	config := Config{Default: DefaultRanges(), Nodes: map[string]Ranges{
		"high":  narrow(7005, 7999, 1003, 49999),
		"low":   narrow(7000, 7006, 1000, 1004),
		"far":   narrow(9000, 9010, 1000, 49999),
		"faraw": narrow(7000, 7999, 60000, 60010),
	}}
	tests := []struct {
		name     string
		existing []Allocation
		resource string
		nodes    []string
		want     Allocation
		err      error
	}{
		{name: "lowest values, node-ids in the order given", resource: "r", nodes: []string{"c", "a", "b"},
			want: alloc("r", 7000, 1000, "c", "a", "b")},
		{name: "ports and minors are unique cluster-wide, not only per node", resource: "r", nodes: []string{"x"},
			existing: []Allocation{alloc("q", 7000, 1000, "a", "b")}, want: alloc("r", 7001, 1001, "x")},
		{name: "the lowest free value fills a gap", resource: "r", nodes: []string{"a"},
			existing: []Allocation{alloc("p", 7000, 1000, "a"), alloc("q", 7002, 1002, "b")}, want: alloc("r", 7001, 1001, "a")},
		{name: "inside the intersection of the hosting nodes' ranges", resource: "r", nodes: []string{"high", "low"},
			want: alloc("r", 7005, 1003, "high", "low")},
		{name: "the intersection is exhausted though each node has room", resource: "r", nodes: []string{"high", "low"},
			existing: []Allocation{alloc("p", 7005, 1010, "z"), alloc("q", 7006, 1011, "z")}, err: ErrPortsExhausted},
		{name: "port ranges that do not intersect", resource: "r", nodes: []string{"low", "far"}, err: ErrPortsExhausted},
		{name: "minor ranges that do not intersect", resource: "r", nodes: []string{"low", "faraw"}, err: ErrMinorsExhausted},
		{name: "minors exhausted", resource: "r", nodes: []string{"low"},
			existing: []Allocation{alloc("m0", 7100, 1000, "z"), alloc("m1", 7101, 1001, "z"), alloc("m2", 7102, 1002, "z"),
				alloc("m3", 7103, 1003, "z"), alloc("m4", 7104, 1004, "z")}, err: ErrMinorsExhausted},
		{name: "sixteen replicas fit", resource: "r", nodes: nodeNames(16), want: alloc("r", 7000, 1000, nodeNames(16)...)},
		{name: "seventeen do not", resource: "r", nodes: nodeNames(17), err: ErrNodeIDsExhausted},
		{name: "no nodes", resource: "r", nodes: nil, err: ErrInvalidInput},
		{name: "a node twice", resource: "r", nodes: []string{"a", "a"}, err: ErrInvalidInput},
		{name: "an unnamed node", resource: "r", nodes: []string{""}, err: ErrInvalidInput},
		{name: "an unnamed resource", resource: "", nodes: []string{"a"}, err: ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newChecked(t, config, tt.existing...)
			got, err := a.allocate(tt.resource, tt.nodes...)
			if !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) {
				t.Fatalf("Allocate() error = %v, want %v", err, tt.err)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Allocate() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func nodeNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("n%02d", i)
	}
	return names
}

// The migration's first lesson: volumes that held data were re-provisioned
// with fresh ports, minors and node-ids. Allocating an existing resource again
// returns exactly what it has, whatever nodes are named and whatever was freed.
func TestAllocationNeverChangesOnceSet(t *testing.T) {
	a := newChecked(t, DefaultConfig())
	first := a.mustAllocate("pvc-1", "b", "a")
	a.mustAllocate("pvc-2", "a", "c")
	a.release("pvc-2") // frees lower values nothing may move to
	a.mustAllocate("pvc-0", "c")
	again := a.mustAllocate("pvc-1", "a", "b")
	if !reflect.DeepEqual(again, first) {
		t.Errorf("re-allocating pvc-1 gave %+v, first allocation was %+v", again, first)
	}
	subset := a.mustAllocate("pvc-1", "a")
	if !reflect.DeepEqual(subset, first) {
		t.Errorf("allocating pvc-1 on a subset gave %+v, want it unchanged %+v", subset, first)
	}
}

func TestAddingReplicaReusesPortAndMinor(t *testing.T) {
	a := newChecked(t, DefaultConfig())
	a.mustAllocate("other", "x")
	first := a.mustAllocate("pvc-1", "a", "b")
	grown := a.mustAllocate("pvc-1", "a", "b", "c")
	if grown.Port != first.Port || grown.Minor != first.Minor {
		t.Errorf("adding c moved pvc-1 from %d/%d to %d/%d", first.Port, first.Minor, grown.Port, grown.Minor)
	}
	if id, _ := grown.NodeID("c"); id != 2 {
		t.Errorf("c got node-id %d, want 2", id)
	}
	a.removeReplica("pvc-1", "a")
	regrown := a.mustAllocate("pvc-1", "d", "e")
	want := []Replica{{"d", 0}, {"b", 1}, {"c", 2}, {"e", 3}}
	if !reflect.DeepEqual(regrown.Replicas, want) {
		t.Errorf("after removing a and adding d, e: replicas %v, want %v (lowest free node-ids)", regrown.Replicas, want)
	}
	if regrown.Port != first.Port || regrown.Minor != first.Minor {
		t.Errorf("replica changes moved pvc-1 from %d/%d to %d/%d", first.Port, first.Minor, regrown.Port, regrown.Minor)
	}
}

// A replica added to a node where the resource's port or minor is already in
// use (possible once live values were adopted) is refused; the resource's port
// is never moved to make room, and the refusal adds none of the nodes.
func TestAddingReplicaRefusesTakenValuesRatherThanMoving(t *testing.T) {
	config := Config{Default: DefaultRanges(), Nodes: map[string]Ranges{"small": narrow(7000, 7001, 1000, 49999)}}
	records := []Allocation{
		alloc("pvc-1", 7005, 1005, "a", "b"),
		alloc("live-port", 7005, 1100, "c"),  // adopted: same port, other nodes
		alloc("live-minor", 7200, 1005, "d"), // adopted: same minor, other nodes
	}
	tests := []struct {
		name  string
		nodes []string
		err   error
	}{
		{"port used on the new node by another resource", []string{"a", "b", "e", "c"}, ErrPortTaken},
		{"minor used on the new node by another resource", []string{"d"}, ErrMinorTaken},
		{"port outside the new node's range", []string{"small"}, ErrOutOfRange},
		{"the seventeenth replica", nodeNames(15), ErrNodeIDsExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newChecked(t, config, records...)
			if _, err := a.allocate("pvc-1", tt.nodes...); !errors.Is(err, tt.err) {
				t.Fatalf("Allocate() error = %v, want %v", err, tt.err)
			}
			got, _ := a.Lookup("pvc-1")
			if !reflect.DeepEqual(got, records[0]) {
				t.Errorf("refusal changed pvc-1 to %+v", got)
			}
		})
	}
}

func TestReleaseFreesValuesForTheNextResource(t *testing.T) {
	a := newChecked(t, Config{Default: narrow(7000, 7001, 1000, 1001)})
	a.mustAllocate("p", "a")
	a.mustAllocate("q", "b")
	if _, err := a.allocate("r", "c"); !errors.Is(err, ErrPortsExhausted) {
		t.Fatalf("third resource in a two-port range: error = %v, want ErrPortsExhausted", err)
	}
	a.removeReplica("p", "a")
	if _, err := a.allocate("r", "c"); !errors.Is(err, ErrPortsExhausted) {
		t.Fatalf("a resource without replicas still holds its port: error = %v, want ErrPortsExhausted", err)
	}
	a.release("p")
	a.release("p") // twice is a no-op
	a.removeReplica("unknown", "a")
	if got := a.mustAllocate("r", "c"); got.Port != 7000 || got.Minor != 1000 {
		t.Errorf("after release r got %d/%d, want the freed 7000/1000", got.Port, got.Minor)
	}
}

// Live DRBD ports had to be read from the kernel: LINSTOR keeps none in its
// custom resources. Adopt records the kernel's values over the record's.
func TestAdoptRecordsLiveValuesOverRecord(t *testing.T) {
	a := newChecked(t, DefaultConfig(), alloc("pvc-1", 7003, 1003, "a", "b"))
	live := Allocation{Resource: "pvc-1", Port: 7010, Minor: 1003, Replicas: []Replica{{"a", 0}, {"b", 2}}}
	got, err := a.adopt(live)
	if err != nil {
		t.Fatalf("Adopt() error = %v", err)
	}
	if !reflect.DeepEqual(got, live) {
		t.Errorf("Adopt() = %+v, want the live values %+v", got, live)
	}
	if fresh := a.mustAllocate("pvc-2", "a"); fresh.Port != 7000 {
		t.Errorf("fresh allocation got port %d, want 7000 (7003 was freed, 7010 is live)", fresh.Port)
	}
	if again := a.mustAllocate("pvc-1", "a", "b"); !reflect.DeepEqual(again, live) {
		t.Errorf("after adoption pvc-1 allocates as %+v, want the live %+v", again, live)
	}
}

// The controller had to be stopped while converted resources were applied, or
// it allocated fresh ports that the real ones then collided with. Adopted live
// values are skipped by fresh allocations; the other order is refused.
func TestAdoptLivePortsBeforeAllocating(t *testing.T) {
	liveOnA := alloc("pvc-live", 7000, 1000, "a")

	a := newChecked(t, DefaultConfig())
	if _, err := a.adopt(liveOnA); err != nil {
		t.Fatalf("Adopt() error = %v", err)
	}
	if fresh := a.mustAllocate("pvc-new", "a", "b"); fresh.Port == 7000 || fresh.Minor == 1000 {
		t.Errorf("fresh allocation %+v took the live port or minor", fresh)
	}

	wrongOrder := newChecked(t, DefaultConfig())
	wrongOrder.mustAllocate("pvc-new", "a", "b")
	if _, err := wrongOrder.adopt(liveOnA); !errors.Is(err, ErrPortTaken) {
		t.Errorf("adopting a live port a fresh allocation took: error = %v, want ErrPortTaken", err)
	}
}

func TestAdopt(t *testing.T) {
	config := Config{Default: DefaultRanges(), Nodes: map[string]Ranges{"small": narrow(7000, 7001, 1000, 1001)}}
	record := Allocation{Resource: "pvc-1", Port: 7003, Minor: 1003, Replicas: []Replica{{"a", 0}, {"b", 1}, {"c", 2}}}
	tests := []struct {
		name string
		live Allocation
		want Allocation
		err  error
	}{
		{name: "unknown resource is recorded as it runs", live: alloc("pvc-9", 7009, 1009, "x", "y"), want: alloc("pvc-9", 7009, 1009, "x", "y")},
		{name: "recorded replicas the kernel does not list keep their node-ids",
			live: Allocation{Resource: "pvc-1", Port: 7004, Minor: 1004, Replicas: []Replica{{"a", 0}, {"d", 3}}},
			want: Allocation{Resource: "pvc-1", Port: 7004, Minor: 1004, Replicas: []Replica{{"a", 0}, {"b", 1}, {"c", 2}, {"d", 3}}}},
		{name: "a live node-id held by a recorded replica the kernel does not list",
			live: Allocation{Resource: "pvc-1", Port: 7003, Minor: 1003, Replicas: []Replica{{"a", 0}, {"d", 1}}}, err: ErrNodeIDTaken},
		{name: "live port used on a node by another record", live: alloc("pvc-9", 7005, 1009, "e"), err: ErrPortTaken},
		{name: "live minor used on a node by another record", live: alloc("pvc-9", 7009, 1005, "e"), err: ErrMinorTaken},
		{name: "live port outside the node's range", live: alloc("pvc-9", 7009, 1000, "small"), err: ErrOutOfRange},
		{name: "no port", live: alloc("pvc-9", 0, 1009, "x"), err: ErrInvalidInput},
		{name: "no minor", live: alloc("pvc-9", 7009, 0, "x"), err: ErrInvalidInput},
		{name: "node-id 16", live: Allocation{Resource: "pvc-9", Port: 7009, Minor: 1009, Replicas: []Replica{{"x", 16}}}, err: ErrInvalidInput},
		{name: "seventeen replicas", live: alloc("pvc-9", 7009, 1009, nodeNames(17)...), err: ErrNodeIDsExhausted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newChecked(t, config, record, alloc("other", 7005, 1005, "e"))
			got, err := a.adopt(tt.live)
			if !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) {
				t.Fatalf("Adopt() error = %v, want %v", err, tt.err)
			}
			if err == nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Adopt() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNewAllocatorReadsRecordsBackWithoutTrustingThem(t *testing.T) {
	config := Config{Default: DefaultRanges(), Nodes: map[string]Ranges{"small": narrow(7000, 7001, 1000, 1001)}}
	tests := []struct {
		name    string
		config  Config
		records []Allocation
	}{
		{"a port twice on a node", config, []Allocation{alloc("p", 7000, 1000, "a"), alloc("q", 7000, 1001, "b", "a")}},
		{"a minor twice on a node", config, []Allocation{alloc("p", 7000, 1000, "a"), alloc("q", 7001, 1000, "a")}},
		{"a node-id twice in a resource", config, []Allocation{{Resource: "p", Port: 7000, Minor: 1000, Replicas: []Replica{{"a", 1}, {"b", 1}}}}},
		{"a node twice in a resource", config, []Allocation{{Resource: "p", Port: 7000, Minor: 1000, Replicas: []Replica{{"a", 0}, {"a", 1}}}}},
		{"a value outside its node's range", config, []Allocation{alloc("p", 7002, 1000, "small")}},
		{"a resource recorded twice", config, []Allocation{alloc("p", 7000, 1000, "a"), alloc("p", 7001, 1001, "b")}},
		{"an unnamed resource", config, []Allocation{alloc("", 7000, 1000, "a")}},
		{"an inverted default range", Config{Default: narrow(7001, 7000, 1000, 1001)}, nil},
		{"port zero", Config{Default: narrow(0, 7000, 1000, 1001)}, nil},
		{"minor zero", Config{Default: narrow(7000, 7000, 0, 1001)}, nil},
		{"a minor beyond 20 bits", Config{Default: narrow(7000, 7000, 1000, MaxMinor+1)}, nil},
		{"a bad node range", Config{Default: DefaultRanges(), Nodes: map[string]Ranges{"x": {}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewAllocator(tt.config, tt.records); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("NewAllocator() error = %v, want ErrInvalidInput", err)
			}
		})
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	a := newChecked(t, DefaultConfig())
	a.mustAllocate("c", "x", "y")
	a.mustAllocate("a", "y", "z")
	a.mustAllocate("b", "x")
	a.release("a")
	snapshot := a.Snapshot()
	if names := []string{snapshot[0].Resource, snapshot[1].Resource}; !reflect.DeepEqual(names, []string{"b", "c"}) {
		t.Errorf("Snapshot() order %q, want sorted [b c]", names)
	}
	reread := newChecked(t, DefaultConfig(), snapshot...)
	if !reflect.DeepEqual(reread.Snapshot(), snapshot) {
		t.Errorf("read-back snapshot differs: %v vs %v", reread.Snapshot(), snapshot)
	}
	want := a.mustAllocate("d", "z")
	if got := reread.mustAllocate("d", "z"); !reflect.DeepEqual(got, want) {
		t.Errorf("read-back allocator allocates %+v, the original %+v", got, want)
	}
	snapshot[0].Replicas[0].Node = "mutated"
	if got, _ := a.Lookup("b"); got.Replicas[0].Node != "x" {
		t.Errorf("mutating a snapshot reached the allocator: %+v", got)
	}
}
