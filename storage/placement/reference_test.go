package placement

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// naiveAllocator is the reference implementation: a plain map of allocations,
// every answer recomputed by scanning all of them. Slow and obviously right,
// and written from the documented rules, not from the Allocator's code.
type naiveAllocator struct {
	config  Config
	records map[string]Allocation
}

func (n *naiveAllocator) holder(node string, port uint16, minor uint32, except string) (portHolder, minorHolder bool) {
	for name, r := range n.records {
		if name == except {
			continue
		}
		for _, rep := range r.Replicas {
			if rep.Node == node {
				portHolder = portHolder || r.Port == port
				minorHolder = minorHolder || r.Minor == minor
			}
		}
	}
	return portHolder, minorHolder
}

func (n *naiveAllocator) fits(resource string, port uint16, minor uint32, node string) error {
	ranges := n.config.RangesOf(node)
	if port < ranges.FirstPort || port > ranges.LastPort || minor < ranges.FirstMinor || minor > ranges.LastMinor {
		return ErrOutOfRange
	}
	portTaken, minorTaken := n.holder(node, port, minor, resource)
	if portTaken {
		return ErrPortTaken
	}
	if minorTaken {
		return ErrMinorTaken
	}
	return nil
}

func (n *naiveAllocator) allocate(resource string, nodes []string) (Allocation, error) {
	seen := map[string]bool{}
	for _, node := range nodes {
		if node == "" || seen[node] {
			return Allocation{}, ErrInvalidInput
		}
		seen[node] = true
	}
	if resource == "" || len(nodes) == 0 {
		return Allocation{}, ErrInvalidInput
	}
	if existing, ok := n.records[resource]; ok {
		return n.grow(existing, nodes)
	}
	if len(nodes) > 16 {
		return Allocation{}, ErrNodeIDsExhausted
	}
	firstPort, lastPort, firstMinor, lastMinor := 0, 1<<16, 0, 1<<21
	for _, node := range nodes {
		r := n.config.RangesOf(node)
		firstPort, lastPort = max(firstPort, int(r.FirstPort)), min(lastPort, int(r.LastPort))
		firstMinor, lastMinor = max(firstMinor, int(r.FirstMinor)), min(lastMinor, int(r.LastMinor))
	}
	port := n.lowestUnused(firstPort, lastPort, func(r Allocation) int { return int(r.Port) })
	if port < 0 {
		return Allocation{}, ErrPortsExhausted
	}
	minor := n.lowestUnused(firstMinor, lastMinor, func(r Allocation) int { return int(r.Minor) })
	if minor < 0 {
		return Allocation{}, ErrMinorsExhausted
	}
	a := alloc(resource, uint16(port), uint32(minor), nodes...)
	n.records[resource] = a
	return a, nil
}

func (n *naiveAllocator) lowestUnused(first, last int, value func(Allocation) int) int {
	for v := first; v <= last; v++ {
		used := false
		for _, r := range n.records {
			used = used || value(r) == v
		}
		if !used {
			return v
		}
	}
	return -1
}

func (n *naiveAllocator) grow(existing Allocation, nodes []string) (Allocation, error) {
	var added []string
	for _, node := range nodes {
		if _, ok := existing.NodeID(node); !ok {
			added = append(added, node)
		}
	}
	if len(existing.Replicas)+len(added) > 16 {
		return Allocation{}, ErrNodeIDsExhausted
	}
	for _, node := range added {
		if err := n.fits(existing.Resource, existing.Port, existing.Minor, node); err != nil {
			return Allocation{}, err
		}
	}
	grown := existing.clone()
	for _, node := range added {
		for id := uint8(0); ; id++ {
			if !slices.ContainsFunc(grown.Replicas, func(r Replica) bool { return r.NodeID == id }) {
				grown.Replicas = append(grown.Replicas, Replica{node, id})
				break
			}
		}
	}
	grown = grown.clone()
	n.records[existing.Resource] = grown
	return grown, nil
}

func (n *naiveAllocator) adopt(live Allocation) (Allocation, error) {
	if live.Resource == "" {
		return Allocation{}, ErrInvalidInput
	}
	if len(live.Replicas) > 16 {
		return Allocation{}, ErrNodeIDsExhausted
	}
	for i, r := range live.Replicas {
		for _, other := range live.Replicas[:i] {
			if other.Node == r.Node || other.NodeID == r.NodeID {
				return Allocation{}, ErrInvalidInput
			}
		}
		if r.Node == "" || r.NodeID > 15 {
			return Allocation{}, ErrInvalidInput
		}
	}
	if live.Port == 0 || live.Minor == 0 {
		return Allocation{}, ErrInvalidInput
	}
	merged := live.clone()
	for _, r := range n.records[live.Resource].Replicas {
		if _, running := live.NodeID(r.Node); running {
			continue
		}
		if slices.ContainsFunc(live.Replicas, func(l Replica) bool { return l.NodeID == r.NodeID }) {
			return Allocation{}, ErrNodeIDTaken
		}
		merged.Replicas = append(merged.Replicas, r)
	}
	merged = merged.clone()
	if len(merged.Replicas) > 16 {
		return Allocation{}, ErrNodeIDsExhausted
	}
	for _, r := range merged.Replicas {
		if err := n.fits(live.Resource, merged.Port, merged.Minor, r.Node); err != nil {
			return Allocation{}, err
		}
	}
	n.records[live.Resource] = merged
	return merged, nil
}

func (n *naiveAllocator) removeReplica(resource, node string) {
	if r, ok := n.records[resource]; ok {
		r = r.clone()
		r.Replicas = slices.DeleteFunc(r.Replicas, func(rep Replica) bool { return rep.Node == node })
		n.records[resource] = r
	}
}

func (n *naiveAllocator) snapshot() []Allocation {
	out := []Allocation{}
	for _, name := range sortedKeys(n.records) {
		out = append(out, n.records[name])
	}
	return out
}

// An operation of the differential tests, drawn from a source of choices.
type operation struct {
	kind     string // allocate, adopt, remove, release
	resource string
	nodes    []string
	live     Allocation
}

func (o operation) String() string {
	if o.kind == "adopt" {
		return fmt.Sprintf("adopt %+v", o.live)
	}
	return fmt.Sprintf("%s %s %q", o.kind, o.resource, o.nodes)
}

// choices is where operations come from: a seeded *rand.Rand, or fuzz bytes.
type choices interface {
	intN(n int) int
}

type rngChoices struct{ rng *rand.Rand }

func (c rngChoices) intN(n int) int { return c.rng.IntN(n) }

type byteChoices struct{ data []byte }

func (c *byteChoices) intN(n int) int {
	if len(c.data) == 0 {
		return 0
	}
	b := c.data[0]
	c.data = c.data[1:]
	return int(b) % n
}

// differentialConfig has narrow, overlapping, disjoint and default ranges, so
// that every refusal happens within a few dozen operations.
func differentialConfig() Config {
	return Config{Default: narrow(7000, 7009, 1000, 1011), Nodes: map[string]Ranges{
		"n0": narrow(7003, 7008, 1000, 1011),
		"n1": narrow(7000, 7004, 1005, 1011),
		"n2": narrow(7020, 7025, 1000, 1011),
		"n3": narrow(7000, 7009, 1020, 1030),
	}}
}

func drawOperation(c choices) operation {
	resource := fmt.Sprintf("r%d", c.intN(14))
	switch kind := c.intN(10); {
	case kind < 5:
		return operation{kind: "allocate", resource: resource, nodes: drawNodes(c)}
	case kind < 7:
		live := Allocation{Resource: resource, Port: uint16(7000 + c.intN(11)), Minor: uint32(1000 + c.intN(13))}
		if c.intN(10) == 0 {
			live.Port = 0
		}
		group, start := 4*c.intN(2), c.intN(4) // nodes n0..n3 (own ranges) or n4..n7 (default)
		for i := range 1 + c.intN(3) {
			node, id := group+(start+i)%4, uint8(2*i+c.intN(2))
			if c.intN(12) == 0 { // now and then a repeated node or a node-id beyond 15
				node, id = group+c.intN(4), uint8(c.intN(18))
			}
			live.Replicas = append(live.Replicas, Replica{Node: fmt.Sprintf("n%d", node), NodeID: id})
		}
		return operation{kind: "adopt", live: live}
	case kind < 9:
		return operation{kind: "remove", resource: resource, nodes: []string{fmt.Sprintf("n%d", c.intN(8))}}
	default:
		return operation{kind: "release", resource: resource}
	}
}

func drawNodes(c choices) []string {
	count, spread := 1+c.intN(3), 8
	if c.intN(20) == 0 {
		count, spread = 14+c.intN(5), 20
	}
	nodes := []string{}
	for range count {
		nodes = append(nodes, fmt.Sprintf("n%d", c.intN(spread)))
	}
	if c.intN(10) != 0 { // mostly well-formed; sometimes a duplicate stays in
		slices.Sort(nodes)
		nodes = slices.Compact(nodes)
	}
	return nodes
}

var sentinels = []error{ErrInvalidInput, ErrNodeIDsExhausted, ErrPortsExhausted, ErrMinorsExhausted,
	ErrPortTaken, ErrMinorTaken, ErrNodeIDTaken, ErrOutOfRange}

func kindOf(err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// runDifferential applies operations to the Allocator and to the reference and
// fails at the first difference in results, errors or snapshots, or at the
// first step that breaks an invariant.
func runDifferential(t *testing.T, c choices, steps int) {
	t.Helper()
	config := differentialConfig()
	fast, err := NewAllocator(config, nil)
	if err != nil {
		t.Fatal(err)
	}
	reference := &naiveAllocator{config: config, records: map[string]Allocation{}}
	var history []operation
	before := fast.Snapshot()
	for range steps {
		op := drawOperation(c)
		history = append(history, op)
		var got, want Allocation
		var gotErr, wantErr error
		adopted := ""
		switch op.kind {
		case "allocate":
			got, gotErr = fast.Allocate(op.resource, op.nodes)
			want, wantErr = reference.allocate(op.resource, op.nodes)
		case "adopt":
			adopted = op.live.Resource
			got, gotErr = fast.Adopt(op.live)
			want, wantErr = reference.adopt(op.live)
		case "remove":
			fast.RemoveReplica(op.resource, op.nodes[0])
			reference.removeReplica(op.resource, op.nodes[0])
		case "release":
			fast.Release(op.resource)
			delete(reference.records, op.resource)
		}
		if kindOf(gotErr) != kindOf(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("after %v:\nAllocator: %+v, %v\nreference: %+v, %v", history, got, gotErr, want, wantErr)
		}
		after := fast.Snapshot()
		if !reflect.DeepEqual(after, reference.snapshot()) {
			t.Fatalf("after %v:\nAllocator holds %v\nreference holds %v", history, after, reference.snapshot())
		}
		unchangedBefore := slices.DeleteFunc(before, func(a Allocation) bool { return a.Resource == adopted })
		if err := checkInvariants(config, unchangedBefore, after); err != nil {
			t.Fatalf("after %v: %v", history, err)
		}
		before = after
	}
}

func TestAllocatorMatchesReference(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runDifferential(t, rngChoices{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}, 200)
		})
	}
}

func FuzzAllocatorMatchesReference(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte("allocate adopt remove release, again and again"))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A few bytes draw one operation, and a few dozen operations reach
		// every refusal in the differential config. Longer inputs add nothing
		// but stall the fuzzer, which minimizes every new input byte by byte.
		if len(data) > 400 {
			t.Skip("inputs beyond 400 bytes add nothing")
		}
		runDifferential(t, &byteChoices{data: data}, 1+len(data)/3)
	})
}
