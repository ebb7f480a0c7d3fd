package core_test

import (
	"testing"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// A member that never shipped has no pairing for a demote's final snapshot or
// a learned successor's pause to touch: both leave the site's pairings as
// they were, with no record of a pairing of nobody's.
func TestDemotingAMemberWithoutAPairingWritesNone(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	demoted := w.create(a, "pvc-plain", core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block})
	_, err := a.Demote(demoted.Ref)
	w.must(err)
	learned := w.create(a, "pvc-other", core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block})
	w.must(a.LearnSuccessor(learned.Ref, chain.Ref{Cluster: clusterB, Volume: "b0000000-0000-4000-8000-000000000911"}))
	pairings, err := a.Store().Pairings()
	w.must(err)
	if len(pairings) != 0 {
		t.Errorf("after demoting and superseding members that never shipped: pairings %+v, want none", pairings)
	}
}
