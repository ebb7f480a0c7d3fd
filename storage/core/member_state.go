package core

import (
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
)

// transition moves a member to state to along the only edges a member has:
// Active to Demoted (fenced by Demote, or on learning its successor), then
// Demoted to Tombstone (reaped); staying where it is moves nothing. Any other
// edge is a bug and panics: a fenced member is never made Active again -- a
// fail-over makes a new one -- and a tombstone never lives again.
func (v *Volume) transition(to chain.State) {
	from := v.State
	switch {
	case from == to:
	case from == chain.Active && to == chain.Demoted:
	case from == chain.Demoted && to == chain.Tombstone:
	default:
		panic(fmt.Sprintf("core: member %s cannot go from %s to %s", v.Ref, from, to))
	}
	v.State = to
}
