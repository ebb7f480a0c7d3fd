package apps

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// OriginTakenAt finds, in the records both sites hold, when the snapshot the
// active end of root's chain was cloned from was ordered: the recovery point
// of the fail-over that made that end. Every bed reads its sites' records its
// own way and asks this one rule.
//
// The active end is the Active member of the highest generation: right after
// a fail-over the old primary, cut off, is still Active and has not learned
// of its successor, so "Active without a successor" names two members.
//
// The snapshot is looked up in the pairing of every member of the chain, not
// only the end's predecessor: a fail-over of a member lost before it shipped
// anything -- right after a relocation made it -- clones the final snapshot
// of that relocation, which the pairing of the predecessor's predecessor
// lists (storage/core's failoverOrigin).
func OriginTakenAt(handle string, sites ...Records) (time.Time, error) {
	root, err := chain.ParseRef(handle)
	if err != nil {
		return time.Time{}, err
	}
	var volumes []core.Volume
	var pairings []core.Pairing
	for _, s := range sites {
		vs, err := s.Volumes()
		if err != nil {
			return time.Time{}, err
		}
		ps, err := s.Pairings()
		if err != nil {
			return time.Time{}, err
		}
		volumes, pairings = append(volumes, vs...), append(pairings, ps...)
	}
	return originIn(root, volumes, pairings)
}

// Records are a site's records, as its store holds them.
type Records interface {
	Volumes() ([]core.Volume, error)
	Pairings() ([]core.Pairing, error)
}

// originIn is OriginTakenAt over the records both sites hold.
func originIn(root chain.Ref, volumes []core.Volume, pairings []core.Pairing) (time.Time, error) {
	end, found := activeEnd(root, volumes)
	switch {
	case !found:
		return time.Time{}, fmt.Errorf("no site records an Active member of %s", root)
	case end.Generation == 0:
		return time.Time{}, fmt.Errorf("the active end of %s is its root %s: no fail-over made it", root, end.Ref)
	case end.Origin.GUID == "":
		return time.Time{}, fmt.Errorf("the active end %s of %s records no origin snapshot", end.Ref, root)
	}
	members := map[chain.Ref]bool{}
	for _, v := range volumes {
		if v.Root == root {
			members[v.Ref] = true
		}
	}
	for _, p := range pairings {
		if !members[p.Source] {
			continue
		}
		for _, sn := range p.Snapshots {
			if sn.GUID == end.Origin.GUID && !sn.TakenAt.IsZero() {
				return sn.TakenAt, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("no pairing of %s's members still lists %s's origin %s", root, end.Ref, end.Origin.Snapshot)
}

// activeEnd is the Active member of root's chain of the highest generation.
func activeEnd(root chain.Ref, volumes []core.Volume) (core.Volume, bool) {
	var end core.Volume
	found := false
	for _, v := range volumes {
		if v.Root != root || v.State != chain.Active {
			continue
		}
		if !found || v.Generation > end.Generation {
			end, found = v, true
		}
	}
	return end, found
}
