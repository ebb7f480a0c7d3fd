package chain

import (
	"errors"
	"fmt"
)

// State is what a member's own cluster records of it.
type State uint8

const (
	// Unknown: no record was available (its cluster did not answer).
	Unknown State = iota
	// Active: the member holds the data and may be written, as far as its
	// cluster knows. A cut-off member may still be Active after a fail-over
	// appended its successor on the other site.
	Active
	// Demoted: fenced read-only. It handed over (relocation) or was told that a
	// successor exists (fail-over); it acknowledges no further write.
	Demoted
	// Tombstone: reaped. The writable volume is gone; the record, the base
	// snapshot and any diverged tail stay. A tombstone never becomes active again.
	Tombstone
)

func (s State) String() string {
	switch s {
	case Unknown:
		return "Unknown"
	case Active:
		return "Active"
	case Demoted:
		return "Demoted"
	case Tombstone:
		return "Tombstone"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Member is one volume of a chain, as its own cluster records it.
type Member struct {
	Ref  Ref
	Root Ref // the chain's root: the PersistentVolume's handle
	// Generation is the member's hop index: 0 for the root, predecessor's + 1.
	Generation uint32
	// Predecessor is the member this one was cloned from; zero for the root.
	Predecessor Ref
	// Successor is the member cloned from this one, once this member's cluster
	// has learned of it; zero until then.
	Successor Ref
	State     State
}

// ErrInvalidMember reports a record that breaks the member rules.
var ErrInvalidMember = errors.New("invalid chain member")

// Validate checks the rules every record obeys on its own.
func (m Member) Validate() error {
	switch {
	case m.Ref.IsZero() || m.Root.IsZero():
		return fmt.Errorf("%w: ref %q and root %q must both be set", ErrInvalidMember, m.Ref, m.Root)
	case m.State == Unknown:
		return fmt.Errorf("%w %s: a record must carry a state", ErrInvalidMember, m.Ref)
	case m.Generation == 0 && (m.Ref != m.Root || !m.Predecessor.IsZero()):
		return fmt.Errorf("%w %s: generation 0 is the root itself, without a predecessor", ErrInvalidMember, m.Ref)
	case m.Generation > 0 && (m.Ref == m.Root || m.Predecessor.IsZero()):
		return fmt.Errorf("%w %s: generation %d needs a predecessor and is not the root", ErrInvalidMember, m.Ref, m.Generation)
	case m.Predecessor == m.Ref || m.Successor == m.Ref:
		return fmt.Errorf("%w %s: a member cannot follow itself", ErrInvalidMember, m.Ref)
	case m.Predecessor.Cluster != "" && m.Predecessor.Cluster == m.Ref.Cluster:
		return fmt.Errorf("%w %s: a hop crosses to the other site, predecessor %s is on the same cluster", ErrInvalidMember, m.Ref, m.Predecessor)
	case m.Successor.Cluster != "" && m.Successor.Cluster == m.Ref.Cluster:
		return fmt.Errorf("%w %s: a hop crosses to the other site, successor %s is on the same cluster", ErrInvalidMember, m.Ref, m.Successor)
	}
	return nil
}
