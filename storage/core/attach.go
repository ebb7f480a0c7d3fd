package core

import (
	"errors"
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/placement"
)

var (
	// ErrNotActive: the member is fenced or reaped; only the chain's Active
	// end is attached, snapshotted or cloned from.
	ErrNotActive = errors.New("member is not active")
	// ErrNotPlaced: the node holds no replica of the member.
	ErrNotPlaced = errors.New("node holds no replica of the member")
)

// Attach makes node the member's DRBD primary, for the node that stages it. It
// is idempotent. The home node stays where it is: the pairing's snapshots live
// in its pool, and a secondary under protocol C holds the same blocks, so
// snapshots taken there stay the base of the next delta.
func (s *Site) Attach(member chain.Ref, node string) (Volume, error) {
	return perform(s, func(d Decisions, _ *Told) (Volume, Effects, error) { return d.Attach(member, node) })
}

// Attach decides Site.Attach.
func (d Decisions) Attach(member chain.Ref, node string) (Volume, Effects, error) {
	return decide(d.s, func(op *Site) (Volume, error) { return op.attach(member, node) })
}

func (s *Site) attach(member chain.Ref, node string) (Volume, error) {
	v, err := s.Volume(member)
	if err != nil {
		return Volume{}, err
	}
	switch {
	case v.Deleting:
		return Volume{}, fmt.Errorf("%w: %s is being deleted", ErrNotFound, member)
	case v.Undecided():
		return Volume{}, fmt.Errorf("%w: %s keeps no DRBD values yet", ErrAdopting, member)
	case v.State != chain.Active:
		return Volume{}, fmt.Errorf("%w: %s is %s", ErrNotActive, member, v.State)
	case !slices.ContainsFunc(v.Allocation.Replicas, func(r placement.Replica) bool { return r.Node == node }):
		return Volume{}, fmt.Errorf("%w: %s is placed on %v, not on %q", ErrNotPlaced, member, nodesOf(v), node)
	case v.Primary == node:
		return v, nil
	}
	v.Primary = node
	return v, s.store.PutVolume(v)
}

// RecordFilesystem remembers the filesystem a node found or made on the
// member's device (rule 7), so that a device later found blank is refused
// instead of formatted.
func (s *Site) RecordFilesystem(member chain.Ref, fsType string) error {
	_, err := perform(s, func(d Decisions, _ *Told) (struct{}, Effects, error) { return d.RecordFilesystem(member, fsType) })
	return err
}

// RecordFilesystem decides Site.RecordFilesystem.
func (d Decisions) RecordFilesystem(member chain.Ref, fsType string) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.recordFilesystem(member, fsType) })
}

func (s *Site) recordFilesystem(member chain.Ref, fsType string) error {
	if fsType == "" {
		return fmt.Errorf("%w: no filesystem to record for %s", ErrInvalid, member)
	}
	v, err := s.Volume(member)
	if err != nil || v.FsFound == fsType {
		return err
	}
	v.FsFound = fsType
	return s.store.PutVolume(v)
}

func nodesOf(v Volume) []string {
	var out []string
	for _, r := range v.Allocation.Replicas {
		out = append(out, r.Node)
	}
	return out
}
