package core

import (
	"testing"

	"github.com/baton-dr/baton/storage/chain"
)

func TestAMemberMovesOnlyForward(t *testing.T) {
	legal := map[[2]chain.State]bool{
		{chain.Active, chain.Active}: true, {chain.Active, chain.Demoted}: true,
		{chain.Demoted, chain.Demoted}: true, {chain.Demoted, chain.Tombstone}: true,
		{chain.Tombstone, chain.Tombstone}: true,
	}
	states := []chain.State{chain.Active, chain.Demoted, chain.Tombstone}
	for _, from := range states {
		for _, to := range states {
			v := Volume{Member: chain.Member{State: from}}
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				v.transition(to)
				return false
			}()
			if panicked == legal[[2]chain.State{from, to}] {
				t.Errorf("%s -> %s: panicked %v, want a panic only on an illegal edge", from, to, panicked)
			}
			if !panicked && v.State != to {
				t.Errorf("%s -> %s left the member %s", from, to, v.State)
			}
		}
	}
}
