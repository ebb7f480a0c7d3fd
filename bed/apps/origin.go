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
	volumes, pairings, err := recordsOf(sites)
	if err != nil {
		return time.Time{}, err
	}
	return originIn(root, volumes, pairings)
}

// recordsOf are the volumes and pairings the sites record, all together.
func recordsOf(sites []Records) (volumes []core.Volume, pairings []core.Pairing, err error) {
	for _, s := range sites {
		vs, err := s.Volumes()
		if err != nil {
			return nil, nil, err
		}
		ps, err := s.Pairings()
		if err != nil {
			return nil, nil, err
		}
		volumes, pairings = append(volumes, vs...), append(pairings, ps...)
	}
	return volumes, pairings, nil
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
	if taken, ok := takenIn(root, end.Origin.GUID, volumes, pairings); ok {
		return taken, nil
	}
	return time.Time{}, fmt.Errorf("no pairing of %s's members still lists %s's origin %s", root, end.Ref, end.Origin.Snapshot)
}

// SnapshotTakenAt finds, in the records both sites hold, when the snapshot
// of root's chain whose GUID is guid was ordered: the recovery point of a
// copy cloned from it -- a drill's bubble, which is no member of the chain.
func SnapshotTakenAt(handle, guid string, sites ...Records) (time.Time, error) {
	root, err := chain.ParseRef(handle)
	if err != nil {
		return time.Time{}, err
	}
	if guid == "" {
		return time.Time{}, fmt.Errorf("no snapshot of %s named: its GUID is empty", root)
	}
	volumes, pairings, err := recordsOf(sites)
	if err != nil {
		return time.Time{}, err
	}
	if taken, ok := takenIn(root, guid, volumes, pairings); ok {
		return taken, nil
	}
	return time.Time{}, fmt.Errorf("no pairing of %s's members lists a snapshot %s", root, guid)
}

// takenIn is when the pairing of a member of root's chain that lists the
// snapshot guid says it was ordered.
func takenIn(root chain.Ref, guid string, volumes []core.Volume, pairings []core.Pairing) (time.Time, bool) {
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
			if sn.GUID == guid && !sn.TakenAt.IsZero() {
				return sn.TakenAt, true
			}
		}
	}
	return time.Time{}, false
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
