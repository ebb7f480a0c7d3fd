package core

import (
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/placement"
)

// Capacity is the largest volume this site can still place on placeCount
// schedulable nodes: the placeCount-th largest free space, counting what is
// promised to placed volumes and replicas the way placement does.
func (s *Site) Capacity(placeCount int) (uint64, error) {
	if placeCount < 1 || placeCount > placement.MaxReplicas {
		return 0, fmt.Errorf("%w: placeCount %d is outside 1..%d", ErrInvalid, placeCount, placement.MaxReplicas)
	}
	nodes, err := s.store.Nodes()
	if err != nil {
		return 0, err
	}
	promised, _, err := s.promised()
	if err != nil {
		return 0, err
	}
	var free []uint64
	for _, n := range nodes {
		if n.Schedulable && n.Usage.SizeBytes > promised[n.Name] {
			free = append(free, n.Usage.SizeBytes-promised[n.Name])
		}
	}
	if len(free) < placeCount {
		return 0, nil
	}
	slices.Sort(free)
	slices.Reverse(free)
	return free[placeCount-1], nil
}
