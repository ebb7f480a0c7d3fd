package placement

import "errors"

// Expected outcomes. Callers test them with errors.Is; the wrapping error says
// which volume, node or value was involved.
var (
	// ErrInvalidInput: the caller passed malformed input (an empty name, a
	// duplicate node, an inverted range, records that break the invariants).
	ErrInvalidInput = errors.New("invalid input")

	// ErrNotEnoughNodes: fewer eligible nodes than the volume needs. The error is
	// a *NotEnoughNodesError that names each rejected candidate and why.
	ErrNotEnoughNodes = errors.New("not enough nodes")
	// ErrAdopting: replicas would have to be added to a volume that is being
	// adopted; additions wait until adoption is complete and someone asks.
	ErrAdopting = errors.New("volume is being adopted: no replicas are added")

	// ErrNodeIDsExhausted: a resource already has 16 replicas (node-ids 0..15).
	ErrNodeIDsExhausted = errors.New("DRBD node-ids exhausted")
	// ErrPortsExhausted: no port is free cluster-wide inside the intersection of
	// the hosting nodes' port ranges (or the ranges do not intersect).
	ErrPortsExhausted = errors.New("DRBD ports exhausted")
	// ErrMinorsExhausted: as ErrPortsExhausted, for minors.
	ErrMinorsExhausted = errors.New("DRBD minors exhausted")
	// ErrPortTaken: the resource's port is used by another resource on the node;
	// the port is never moved to make room.
	ErrPortTaken = errors.New("DRBD port taken on node")
	// ErrMinorTaken: as ErrPortTaken, for minors.
	ErrMinorTaken = errors.New("DRBD minor taken on node")
	// ErrNodeIDTaken: the node-id is held by another replica of the resource.
	ErrNodeIDTaken = errors.New("DRBD node-id taken in resource")
	// ErrOutOfRange: the resource's port or minor lies outside the node's range.
	ErrOutOfRange = errors.New("DRBD value outside the node's range")

	// ErrWouldReprovision: the control plane has no record of a volume whose
	// chain, tombstone or on-node traces exist; provisioning it afresh would
	// replace data with an empty volume under fresh ports, minors and node-ids.
	ErrWouldReprovision = errors.New("refusing to re-provision a volume that exists")
	// ErrDataNotFound: the resource is initialized (it holds data) but a replica
	// has no DRBD metadata; the data must be found, never started afresh.
	ErrDataNotFound = errors.New("initialized resource without DRBD metadata")
	// ErrNothingToAdopt: neither a record nor any trace of the volume exists.
	ErrNothingToAdopt = errors.New("nothing to adopt")
	// ErrProbesDisagree: nodes report different live ports, minors, node-ids or
	// filesystems for one volume; a person must look before anything is decided.
	ErrProbesDisagree = errors.New("node probes disagree")
)
