package core

import (
	"fmt"
	"math"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/placement"
)

// Capacity is the largest thin volume this site can still place on
// placeCount schedulable nodes: the placeCount-th largest room, counted the
// way placement counts it (placement.Room).
func (s *Site) Capacity(placeCount int) (uint64, error) {
	if placeCount < 1 || placeCount > placement.MaxReplicas {
		return 0, fmt.Errorf("%w: placeCount %d is outside 1..%d", ErrInvalid, placeCount, placement.MaxReplicas)
	}
	candidates, _, err := s.candidates(nil)
	if err != nil {
		return 0, err
	}
	var room []uint64
	for _, c := range candidates {
		if c.Schedulable {
			room = append(room, placement.Room(c, backend.Thin, s.config.ThinOvercommitPercent))
		}
	}
	if len(room) < placeCount {
		return 0, nil
	}
	slices.Sort(room)
	slices.Reverse(room)
	return room[placeCount-1], nil
}

// candidates are the site's nodes as placement sees them, those in holding
// marked as holding the volume placed, and every allocation made.
//
// A node's provisioned bytes are the sizes of every volume and replica on it.
// What it has used is what it reported (written data and the reservations it
// made), or, when more, the full sizes of the volumes placed on it that
// reserve them -- thick ones, or any of a thick pool -- some of which it may
// not have created yet. A clone reserves nothing: it shares its origin's
// blocks.
func (s *Site) candidates(holding []string) ([]placement.Candidate, []placement.Allocation, error) {
	nodes, err := s.store.Nodes()
	if err != nil {
		return nil, nil, err
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return nil, nil, err
	}
	replicas, err := s.store.Replicas()
	if err != nil {
		return nil, nil, err
	}
	pools := map[string]backend.Provisioning{}
	for _, n := range nodes {
		pools[n.Name] = n.Provisioning
	}
	provisioned, reserved := map[string]uint64{}, map[string]uint64{}
	place := func(node string, shape Shape, clone bool) {
		provisioned[node] = saturatingAdd(provisioned[node], shape.SizeBytes)
		if !clone && (shape.Provisioning == backend.Thick || pools[node] == backend.Thick) {
			reserved[node] = saturatingAdd(reserved[node], shape.SizeBytes)
		}
	}
	var allocations []placement.Allocation
	for _, v := range volumes {
		for _, r := range v.Allocation.Replicas {
			place(r.Node, v.Shape, v.Origin.Dataset != "")
		}
		if v.Allocation.Resource != "" {
			allocations = append(allocations, v.Allocation)
		}
	}
	for _, r := range replicas {
		for _, n := range r.Nodes {
			place(n, r.Shape, false)
		}
	}
	candidates := make([]placement.Candidate, 0, len(nodes))
	for _, n := range nodes {
		used := max(n.Usage.AllocatedBytes, reserved[n.Name])
		free := uint64(0)
		if n.Usage.SizeBytes > used {
			free = n.Usage.SizeBytes - used
		}
		candidates = append(candidates, placement.Candidate{Node: n.Name, SizeBytes: n.Usage.SizeBytes, FreeBytes: free,
			ProvisionedBytes: provisioned[n.Name], Provisioning: n.Provisioning, Schedulable: n.Schedulable,
			HasReplica: slices.Contains(holding, n.Name)})
	}
	return candidates, allocations, nil
}

func saturatingAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
