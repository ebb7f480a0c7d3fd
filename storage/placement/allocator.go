package placement

import (
	"fmt"
	"math/bits"
	"slices"
)

// Allocator hands out DRBD node-ids, ports and minors by Blockstor's rules
// over a snapshot of what is allocated. It is not safe for concurrent use: the
// site operator serializes allocations (Blockstor holds a per-definition lock
// for the same reason) and persists each result before it is used.
//
// Rules:
//   - node-id: the lowest free 0..15 among one resource's replicas;
//   - port and minor: one value per resource, shared by all its nodes, the lowest
//     free cluster-wide inside the intersection of the hosting nodes' ranges;
//   - once set, never changed: allocating an existing resource returns its
//     values, adding a replica reuses the resource's port and minor or refuses
//     (ErrOutOfRange, ErrPortTaken, ErrMinorTaken), and removing a replica frees
//     only its node-id. Only Adopt changes a value, to the one the kernel runs.
type Allocator struct {
	config    Config
	resources map[string]*Allocation // replicas sorted by node-id
	ports     valueSet               // resources per port, cluster-wide
	minors    valueSet               // resources per minor, cluster-wide
	nodes     map[string]*nodeUse
}

// nodeUse is what one node's replicas hold: the resource behind each port and
// minor, so that a conflict names its holder.
type nodeUse struct {
	ports  map[uint16]string
	minors map[uint32]string
}

// NewAllocator builds an allocator over persisted records. Records that break
// the invariants (a port or minor used twice on a node, a node-id used twice in
// a resource, a value outside its node's ranges) are ErrInvalidInput: they are
// read back, never trusted.
func NewAllocator(config Config, records []Allocation) (*Allocator, error) {
	if err := config.validate(); err != nil {
		return nil, err
	}
	for _, r := range records {
		if err := validateReplicas(r); err != nil {
			return nil, err
		}
	}
	if err := checkInvariants(config, nil, records); err != nil {
		return nil, fmt.Errorf("%w: records break the invariants: %v", ErrInvalidInput, err)
	}
	a := &Allocator{
		config:    config,
		resources: make(map[string]*Allocation, len(records)),
		ports:     newValueSet(1 << 16),
		minors:    newValueSet(MaxMinor + 1),
		nodes:     map[string]*nodeUse{},
	}
	for _, r := range records {
		if _, dup := a.resources[r.Resource]; dup {
			return nil, fmt.Errorf("%w: resource %q recorded twice", ErrInvalidInput, r.Resource)
		}
		a.insert(r.clone())
	}
	return a, nil
}

// Allocate ensures a resource exists with replicas on at least the given
// nodes and returns its allocation. A new resource gets a fresh port and minor
// and node-ids 0.. in the order the nodes are given. An existing resource keeps
// every value it has; nodes it lacks are added with the lowest free node-ids,
// all of them or none. Errors: ErrInvalidInput, ErrNodeIDsExhausted,
// ErrPortsExhausted, ErrMinorsExhausted, and for added nodes ErrOutOfRange,
// ErrPortTaken, ErrMinorTaken.
func (a *Allocator) Allocate(resource string, nodes []string) (Allocation, error) {
	if resource == "" || len(nodes) == 0 || slices.Contains(nodes, "") || hasDuplicate(nodes) {
		return Allocation{}, fmt.Errorf("%w: allocate %q on nodes %q", ErrInvalidInput, resource, nodes)
	}
	before := a.beforeStep()
	var result Allocation
	var err error
	if existing, ok := a.resources[resource]; ok {
		result, err = a.addReplicas(existing, nodes)
	} else {
		result, err = a.allocateNew(resource, nodes)
	}
	a.afterStep(before, "")
	return result, err
}

func (a *Allocator) allocateNew(resource string, nodes []string) (Allocation, error) {
	if len(nodes) > MaxReplicas {
		return Allocation{}, fmt.Errorf("%w: resource %q on %d nodes", ErrNodeIDsExhausted, resource, len(nodes))
	}
	within := a.config.RangesOf(nodes[0])
	for _, node := range nodes[1:] {
		within = within.intersect(a.config.RangesOf(node))
	}
	port, ok := a.ports.lowestFree(uint32(within.FirstPort), uint32(within.LastPort))
	if !ok {
		return Allocation{}, fmt.Errorf("%w: resource %q: no free port in %d-%d, the intersection of the ranges of %q",
			ErrPortsExhausted, resource, within.FirstPort, within.LastPort, nodes)
	}
	minor, ok := a.minors.lowestFree(within.FirstMinor, within.LastMinor)
	if !ok {
		return Allocation{}, fmt.Errorf("%w: resource %q: no free minor in %d-%d, the intersection of the ranges of %q",
			ErrMinorsExhausted, resource, within.FirstMinor, within.LastMinor, nodes)
	}
	allocation := Allocation{Resource: resource, Port: uint16(port), Minor: minor}
	for i, node := range nodes {
		allocation.Replicas = append(allocation.Replicas, Replica{Node: node, NodeID: uint8(i)})
	}
	a.insert(allocation)
	return allocation.clone(), nil
}

func (a *Allocator) addReplicas(existing *Allocation, nodes []string) (Allocation, error) {
	var added []string
	for _, node := range nodes {
		if _, ok := existing.NodeID(node); !ok {
			added = append(added, node)
		}
	}
	if len(existing.Replicas)+len(added) > MaxReplicas {
		return Allocation{}, fmt.Errorf("%w: resource %q has %d replicas, %d more asked",
			ErrNodeIDsExhausted, existing.Resource, len(existing.Replicas), len(added))
	}
	for _, node := range added {
		if err := a.checkFits(existing.Resource, existing.Port, existing.Minor, node); err != nil {
			return Allocation{}, err
		}
	}
	grown := existing.clone()
	ids := usedNodeIDs(grown)
	for _, node := range added {
		id := uint8(bits.TrailingZeros16(^ids))
		ids |= 1 << id
		grown.Replicas = append(grown.Replicas, Replica{Node: node, NodeID: id})
	}
	a.remove(existing.Resource)
	a.insert(grown.clone())
	return grown.clone(), nil
}

// checkFits says whether a node can run a resource on the given port and minor:
// both inside its ranges and used there by no other resource.
func (a *Allocator) checkFits(resource string, port uint16, minor uint32, node string) error {
	ranges := a.config.RangesOf(node)
	if !ranges.holdsPort(port) || !ranges.holdsMinor(minor) {
		return fmt.Errorf("%w: resource %q (port %d, minor %d) on node %q with %v",
			ErrOutOfRange, resource, port, minor, node, ranges)
	}
	use := a.nodes[node]
	if use == nil {
		return nil
	}
	if holder, ok := use.ports[port]; ok && holder != resource {
		return fmt.Errorf("%w: port %d of resource %q is used on node %q by %q", ErrPortTaken, port, resource, node, holder)
	}
	if holder, ok := use.minors[minor]; ok && holder != resource {
		return fmt.Errorf("%w: minor %d of resource %q is used on node %q by %q", ErrMinorTaken, minor, resource, node, holder)
	}
	return nil
}

// RemoveReplica drops a node's replica and frees its node-id. The resource
// keeps its port and minor, even with no replica left, until Release. Removing
// what is not there is a no-op.
func (a *Allocator) RemoveReplica(resource, node string) {
	existing, ok := a.resources[resource]
	if !ok {
		return
	}
	if _, ok := existing.NodeID(node); !ok {
		return
	}
	before := a.beforeStep()
	shrunk := existing.clone()
	shrunk.Replicas = slices.DeleteFunc(shrunk.Replicas, func(r Replica) bool { return r.Node == node })
	a.remove(resource)
	a.insert(shrunk)
	a.afterStep(before, "")
}

// Release forgets a resource and frees its port, minor and node-ids. Releasing
// an unknown resource is a no-op.
func (a *Allocator) Release(resource string) {
	if _, ok := a.resources[resource]; !ok {
		return
	}
	before := a.beforeStep()
	a.remove(resource)
	a.afterStep(before, "")
}

// Adopt records the values the kernel runs for a resource (AllocationOf a
// backend.Replicator.Show result, or Adoption.Record). The live port, minor
// and node-ids win over the record; recorded replicas the kernel does not list
// keep theirs. This is the one way a value changes once set, because the
// record was wrong, not the kernel. Adopt live resources before allocating new
// ones: a fresh allocation may take a port the kernel already uses, and the
// live one is then refused. Errors: ErrInvalidInput (an unset port or minor, a
// bad replica list), ErrNodeIDsExhausted, ErrNodeIDTaken, ErrOutOfRange,
// ErrPortTaken, ErrMinorTaken.
func (a *Allocator) Adopt(live Allocation) (Allocation, error) {
	if err := validateReplicas(live); err != nil {
		return Allocation{}, err
	}
	if live.Port == 0 || live.Minor == 0 {
		return Allocation{}, fmt.Errorf("%w: live resource %q without port or minor", ErrInvalidInput, live.Resource)
	}
	merged, _, err := mergeLive(a.resources[live.Resource], live)
	if err != nil {
		return Allocation{}, err
	}
	if len(merged.Replicas) > MaxReplicas {
		return Allocation{}, fmt.Errorf("%w: adopting %q gives %d replicas", ErrNodeIDsExhausted, live.Resource, len(merged.Replicas))
	}
	for _, r := range merged.Replicas {
		if err := a.checkFits(merged.Resource, merged.Port, merged.Minor, r.Node); err != nil {
			return Allocation{}, err
		}
	}
	before := a.beforeStep()
	if _, ok := a.resources[live.Resource]; ok {
		a.remove(live.Resource)
	}
	a.insert(merged)
	a.afterStep(before, live.Resource)
	return merged.clone(), nil
}

// Lookup returns a resource's allocation.
func (a *Allocator) Lookup(resource string) (Allocation, bool) {
	existing, ok := a.resources[resource]
	if !ok {
		return Allocation{}, false
	}
	return existing.clone(), true
}

// Snapshot returns every allocation, sorted by resource name: what the caller
// persists, and what NewAllocator reads back.
func (a *Allocator) Snapshot() []Allocation {
	out := make([]Allocation, 0, len(a.resources))
	for _, name := range sortedKeys(a.resources) {
		out = append(out, a.resources[name].clone())
	}
	return out
}

// insert indexes an allocation whose conflicts were already checked.
func (a *Allocator) insert(allocation Allocation) {
	_, exists := a.resources[allocation.Resource]
	assertf(!exists, "inserting resource %q twice", allocation.Resource)
	a.resources[allocation.Resource] = &allocation
	a.ports.add(uint32(allocation.Port))
	a.minors.add(allocation.Minor)
	for _, r := range allocation.Replicas {
		use := a.nodes[r.Node]
		if use == nil {
			use = &nodeUse{ports: map[uint16]string{}, minors: map[uint32]string{}}
			a.nodes[r.Node] = use
		}
		_, portUsed := use.ports[allocation.Port]
		_, minorUsed := use.minors[allocation.Minor]
		assertf(!portUsed && !minorUsed, "resource %q lands on a used port %d or minor %d of node %q",
			allocation.Resource, allocation.Port, allocation.Minor, r.Node)
		use.ports[allocation.Port] = allocation.Resource
		use.minors[allocation.Minor] = allocation.Resource
	}
}

// remove unindexes an allocation.
func (a *Allocator) remove(resource string) {
	allocation, ok := a.resources[resource]
	assertf(ok, "removing unknown resource %q", resource)
	for _, r := range allocation.Replicas {
		use := a.nodes[r.Node]
		assertf(use.ports[allocation.Port] == resource && use.minors[allocation.Minor] == resource,
			"node %q does not index resource %q", r.Node, resource)
		delete(use.ports, allocation.Port)
		delete(use.minors, allocation.Minor)
		if len(use.ports) == 0 {
			delete(a.nodes, r.Node)
		}
	}
	a.ports.remove(uint32(allocation.Port))
	a.minors.remove(allocation.Minor)
	delete(a.resources, resource)
}

func usedNodeIDs(allocation Allocation) uint16 {
	var ids uint16
	for _, r := range allocation.Replicas {
		ids |= 1 << r.NodeID
	}
	return ids
}

func hasDuplicate(names []string) bool {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return true
		}
		seen[n] = true
	}
	return false
}
