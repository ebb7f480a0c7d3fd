package core

import (
	"github.com/baton-dr/baton/storage/chain"
)

// Peers reaches the other sites' control planes: the storage API client in
// production, the simulated network in the simulation. Every method may fail
// with an error wrapping chain.ErrUnreachable; the callers treat that as
// "ask again later", never as an answer.
type Peers interface {
	// Handover asks the source member's site whether it handed over.
	Handover(source chain.Ref) (Handover, error)
	// LearnSuccessor tells a member's site that a fail-over appended successor.
	LearnSuccessor(member, successor chain.Ref) error
	// PrepareReceive asks the target site to keep a replica of a member and to
	// name the nodes that receive its streams.
	PrepareReceive(target chain.ClusterID, request ReceiveRequest) ([]Receiver, error)
	// Holdings asks a site which snapshots (by GUID) of root's chain it holds,
	// in its members and its replicas: the candidates for a delta's base.
	Holdings(cluster chain.ClusterID, root chain.Ref) ([]string, error)
}

// Handover is what a member's own site says of it to the site failing it over.
type Handover struct {
	State     chain.State
	Successor chain.Ref
	// Final is the GUID of the snapshot that carries every write the member
	// acknowledged: set once the member is fenced and that snapshot shipped.
	Final string
}

// ReceiveRequest describes the member whose streams a target site will receive.
type ReceiveRequest struct {
	Source     chain.Ref
	Root       chain.Ref
	Generation uint32
	Shape      Shape
	// OriginGUID is the snapshot the source was cloned from, for a fail-over
	// clone: the receiving site holds it as a snapshot of its own predecessor.
	OriginGUID string
}
