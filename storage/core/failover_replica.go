package core

import "github.com/baton-dr/baton/storage/chain"

// failoverReplica is the replica a fail-over of source starts from: the one
// this site keeps -- or, when it keeps none, one derived from the member
// this site relocated into source. A relocation's new member asks its peer
// to receive only on its first shipment; cut off before that, it leaves the
// site it came from no replica record at all, and without one a fail-over
// back there was refused for ever (ErrNoReplica), though that site holds the
// very snapshot source was cloned from: its predecessor's final one, shipped
// after the fence. Failing over from it loses only source's own writes, as
// failoverOrigin's clone of a relocated source that never shipped does.
func (s *Site) failoverReplica(source chain.Ref) (Replica, bool, error) {
	r, found, err := s.replica(source)
	if err != nil || found {
		return r, found, err
	}
	volumes, err := s.store.Volumes()
	if err != nil {
		return Replica{}, false, err
	}
	for _, v := range volumes {
		if v.Successor != source || v.State == chain.Active {
			continue
		}
		p, found, err := s.pairing(v.Ref)
		if err != nil || !found {
			return Replica{}, false, err
		}
		final, shipped := p.NewestShipped()
		if !shipped || !p.InSyncSince(v.FencedAt) {
			return Replica{}, false, nil // not a relocation whose final sync completed
		}
		return Replica{Source: source, Root: v.Root, SourceGeneration: v.Generation + 1, Shape: v.Shape,
			OriginGUID: final.GUID}, true, nil
	}
	return Replica{}, false, nil
}
