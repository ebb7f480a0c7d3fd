package placement

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// Replica is one node's place in a DRBD resource.
type Replica struct {
	Node   string
	NodeID uint8 // 0..15
}

// Allocation is what a DRBD resource was given: one port and one minor shared by
// all its nodes, and a node-id per replica. It is the record the caller persists.
type Allocation struct {
	Resource string
	Port     uint16 // 0 = unset (only in probes and records being adopted)
	Minor    uint32 // 0 = unset
	Replicas []Replica
}

// NodeID returns the node-id of a node's replica.
func (a Allocation) NodeID(node string) (uint8, bool) {
	for _, r := range a.Replicas {
		if r.Node == node {
			return r.NodeID, true
		}
	}
	return 0, false
}

// clone copies the allocation with its replicas sorted by node-id, so that
// nobody shares the slice and equal allocations print alike.
func (a Allocation) clone() Allocation {
	a.Replicas = slices.Clone(a.Replicas)
	slices.SortFunc(a.Replicas, func(x, y Replica) int { return cmp.Compare(x.NodeID, y.NodeID) })
	return a
}

// AllocationOf reads an allocation from the configuration the kernel runs
// (backend.Replicator.Show): what adoption takes as the live values.
func AllocationOf(config backend.ResourceConfig) Allocation {
	a := Allocation{Resource: config.Name, Port: config.Port, Minor: config.Minor}
	for _, n := range config.Nodes {
		a.Replicas = append(a.Replicas, Replica{Node: n.Node, NodeID: n.NodeID})
	}
	return a.clone()
}

// validateReplicas checks that nodes are named, distinct, and hold distinct
// node-ids in 0..15.
func validateReplicas(a Allocation) error {
	if a.Resource == "" {
		return fmt.Errorf("%w: allocation names no resource", ErrInvalidInput)
	}
	if len(a.Replicas) > MaxReplicas {
		return fmt.Errorf("%w: resource %q has %d replicas", ErrNodeIDsExhausted, a.Resource, len(a.Replicas))
	}
	var nodes = make(map[string]bool, len(a.Replicas))
	var ids uint16
	for _, r := range a.Replicas {
		if r.Node == "" || nodes[r.Node] || r.NodeID >= MaxReplicas || ids&(1<<r.NodeID) != 0 {
			return fmt.Errorf("%w: resource %q: replica %q with node-id %d is unnamed, repeated or out of 0..15",
				ErrInvalidInput, a.Resource, r.Node, r.NodeID)
		}
		nodes[r.Node] = true
		ids |= 1 << r.NodeID
	}
	return nil
}

// Field names a DRBD value that a record and the kernel can disagree on.
type Field uint8

const (
	// FieldPort is the resource's TCP port.
	FieldPort Field = iota + 1
	// FieldMinor is the resource's device minor.
	FieldMinor
	// FieldNodeID is one node's node-id in the resource.
	FieldNodeID
)

// String names the field as DRBD does.
func (f Field) String() string {
	switch f {
	case FieldPort:
		return "port"
	case FieldMinor:
		return "minor"
	case FieldNodeID:
		return "node-id"
	}
	return fmt.Sprintf("Field(%d)", uint8(f))
}

// Discrepancy is a value the record holds differently from the kernel. The
// kernel's value wins: it is the one the running resource was set up with.
type Discrepancy struct {
	Field    Field
	Node     string // for FieldNodeID
	Recorded uint32 // 0 when the record had no value
	Live     uint32
}

// String reads like "port recorded 7003, live 7010".
func (d Discrepancy) String() string {
	subject := d.Field.String()
	if d.Field == FieldNodeID {
		subject += " of " + d.Node
	}
	if d.Recorded == 0 && d.Field != FieldNodeID {
		return fmt.Sprintf("%s unrecorded, live %d", subject, d.Live)
	}
	return fmt.Sprintf("%s recorded %d, live %d", subject, d.Recorded, d.Live)
}

// mergeLive corrects a record with what the kernel runs: the live port, minor
// and node-ids win; recorded replicas the kernel does not list keep their
// node-ids unless a live replica holds the same one (ErrNodeIDTaken). A nil
// record stands for a record with nothing set.
func mergeLive(record *Allocation, live Allocation) (Allocation, []Discrepancy, error) {
	recorded := Allocation{Resource: live.Resource}
	if record != nil {
		recorded = *record
	}
	assertf(recorded.Resource == live.Resource, "merging live %q into record %q", live.Resource, recorded.Resource)
	merged := live.clone()
	var found []Discrepancy
	if live.Port != recorded.Port && live.Port != 0 {
		found = append(found, Discrepancy{Field: FieldPort, Recorded: uint32(recorded.Port), Live: uint32(live.Port)})
	}
	if live.Port == 0 {
		merged.Port = recorded.Port
	}
	if live.Minor != recorded.Minor && live.Minor != 0 {
		found = append(found, Discrepancy{Field: FieldMinor, Recorded: recorded.Minor, Live: live.Minor})
	}
	if live.Minor == 0 {
		merged.Minor = recorded.Minor
	}
	for _, r := range recorded.clone().Replicas {
		liveID, running := live.NodeID(r.Node)
		if running {
			if liveID != r.NodeID {
				found = append(found, Discrepancy{Field: FieldNodeID, Node: r.Node, Recorded: uint32(r.NodeID), Live: uint32(liveID)})
			}
			continue
		}
		for _, l := range live.Replicas {
			if l.NodeID == r.NodeID {
				return Allocation{}, nil, fmt.Errorf("%w: resource %q: recorded %s and live %s both hold node-id %d",
					ErrNodeIDTaken, live.Resource, r.Node, l.Node, r.NodeID)
			}
		}
		merged.Replicas = append(merged.Replicas, r)
	}
	merged = merged.clone()
	assertf(len(merged.Replicas) >= len(live.Replicas), "merge of %q lost live replicas", live.Resource)
	return merged, found, nil
}
