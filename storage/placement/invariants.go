package placement

import (
	"errors"
	"fmt"
)

// checkInvariants checks allocations as an outside observer, from the records
// alone: ports and minors unique per node, node-ids unique per resource and in
// 0..15, nodes unique per resource, values inside every hosting node's ranges,
// and every value present in before unchanged in after. It returns every
// violation, in record order. Tests run it after each step; builds with the
// invariants tag run it inside the Allocator too.
func checkInvariants(config Config, before, after []Allocation) error {
	var problems []error
	type key struct {
		node  string
		value uint32
	}
	portHolder := map[key]string{}
	minorHolder := map[key]string{}
	for _, a := range after {
		if err := validateReplicas(a); err != nil {
			problems = append(problems, err)
		}
		for _, r := range a.Replicas {
			ranges := config.RangesOf(r.Node)
			if !ranges.holdsPort(a.Port) || !ranges.holdsMinor(a.Minor) {
				problems = append(problems, fmt.Errorf("resource %q (port %d, minor %d) outside %v of node %q", a.Resource, a.Port, a.Minor, ranges, r.Node))
			}
			if holder, ok := portHolder[key{r.Node, uint32(a.Port)}]; ok {
				problems = append(problems, fmt.Errorf("port %d used twice on node %q: %q and %q", a.Port, r.Node, holder, a.Resource))
			}
			if holder, ok := minorHolder[key{r.Node, a.Minor}]; ok {
				problems = append(problems, fmt.Errorf("minor %d used twice on node %q: %q and %q", a.Minor, r.Node, holder, a.Resource))
			}
			portHolder[key{r.Node, uint32(a.Port)}] = a.Resource
			minorHolder[key{r.Node, a.Minor}] = a.Resource
		}
	}
	problems = append(problems, checkUnchanged(before, after)...)
	return errors.Join(problems...)
}

// checkUnchanged reports values that changed between two snapshots of the same
// resources. Resources and replicas that come or go are not changes.
func checkUnchanged(before, after []Allocation) []error {
	now := make(map[string]Allocation, len(after))
	for _, a := range after {
		now[a.Resource] = a
	}
	var problems []error
	for _, was := range before {
		is, ok := now[was.Resource]
		if !ok {
			continue
		}
		if is.Port != was.Port || is.Minor != was.Minor {
			problems = append(problems, fmt.Errorf("resource %q moved from port %d minor %d to port %d minor %d",
				was.Resource, was.Port, was.Minor, is.Port, is.Minor))
		}
		for _, r := range was.Replicas {
			if id, ok := is.NodeID(r.Node); ok && id != r.NodeID {
				problems = append(problems, fmt.Errorf("resource %q: node-id of %q moved from %d to %d", was.Resource, r.Node, r.NodeID, id))
			}
		}
	}
	return problems
}

// beforeStep captures the state a step starts from, when steps are checked.
func (a *Allocator) beforeStep() []Allocation {
	if !checkEveryStep {
		return nil
	}
	return a.Snapshot()
}

// afterStep panics when a step broke an invariant. adopted names the resource
// whose values an Adopt may have corrected, which is not a change.
func (a *Allocator) afterStep(before []Allocation, adopted string) {
	if !checkEveryStep {
		return
	}
	kept := before[:0:0]
	for _, b := range before {
		if b.Resource != adopted {
			kept = append(kept, b)
		}
	}
	if err := checkInvariants(a.config, kept, a.Snapshot()); err != nil {
		panic(fmt.Sprintf("placement: allocator step broke an invariant: %v", err))
	}
}
