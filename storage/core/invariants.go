package core

import (
	"errors"
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
)

// checkInvariants checks what one site's records must always hold, on the
// view of an operation just decided -- the store as it will be once the
// operation's writes are in. A broken one is a bug in a decision; decide
// panics on it. Records a failed write left half-way (a fail-over's pairing
// without its member) are states the invariants allow: retries complete them.
//
//   - every member is valid (chain.Member.Validate) and of this cluster;
//   - a source has at most one successor here, and a replica closed into a
//     member is closed into that successor;
//   - no two DRBD resources share a port, or a minor.
func (s *Site) checkInvariants() error {
	volumes, err := s.store.Volumes()
	if err != nil {
		return nil // the decision read the same store: an error there is the caller's
	}
	replicas, err := s.store.Replicas()
	if err != nil {
		return nil
	}
	var problems []error
	successors := map[chain.Ref]chain.Ref{}
	ports, minors := map[uint16]string{}, map[uint32]string{}
	for _, v := range volumes {
		if err := v.Validate(); err != nil || v.Ref.Cluster != s.config.Cluster {
			problems = append(problems, fmt.Errorf("member %s: invalid or foreign: %v", v.Ref, err))
		}
		if !v.Predecessor.IsZero() {
			if other, ok := successors[v.Predecessor]; ok {
				problems = append(problems, fmt.Errorf("%s has two successors here: %s and %s", v.Predecessor, other, v.Ref))
			}
			successors[v.Predecessor] = v.Ref
		}
		if a := v.Allocation; a.Resource != "" {
			if other, ok := ports[a.Port]; ok && a.Port != 0 {
				problems = append(problems, fmt.Errorf("port %d is %s's and %s's", a.Port, other, a.Resource))
			}
			if other, ok := minors[a.Minor]; ok && a.Minor != 0 {
				problems = append(problems, fmt.Errorf("minor %d is %s's and %s's", a.Minor, other, a.Resource))
			}
			ports[a.Port], minors[a.Minor] = a.Resource, a.Resource
		}
	}
	for _, r := range replicas {
		if successor, ok := successors[r.Source]; ok && !r.ClonedInto.IsZero() && r.ClonedInto != successor {
			problems = append(problems, fmt.Errorf("the replica of %s is closed into %s, its successor is %s",
				r.Source, r.ClonedInto, successor))
		}
	}
	return errors.Join(problems...)
}
