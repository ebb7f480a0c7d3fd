package core

import (
	"errors"
	"fmt"
	"slices"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/replication"
)

// Failover makes this site the holder of source's data: it clones the newest
// snapshot received from source into a new member, one generation on, whose
// predecessor is source (rule 3: the fail-over endpoint is addressed with the
// member holding the data and creates the clone on the promoting site).
//
// Without force it first asks source's site: while source is a live primary,
// or its final snapshot has not arrived, or the site cannot be asked, it
// refuses and changes nothing (Ramen then retries with force, which an
// operator uses when the source site is lost). It is idempotent: a source
// already failed over here returns the clone made the first time.
func (s *Site) Failover(source chain.Ref, force bool) (Volume, error) {
	if source.Cluster == s.config.Cluster {
		return Volume{}, fmt.Errorf("%w: %s is local; fail-over clones a member of the other site", ErrInvalid, source)
	}
	r, found, err := s.failoverReplica(source)
	if err != nil {
		return Volume{}, err
	}
	if !found {
		return Volume{}, fmt.Errorf("%w: %s", ErrNoReplica, source)
	}
	if !r.ClonedInto.IsZero() {
		return s.Volume(r.ClonedInto)
	}
	if !force {
		if err := s.checkHandover(source, r); err != nil {
			return Volume{}, err
		}
	}
	origin, holders, err := s.failoverOrigin(r)
	if err != nil {
		return Volume{}, err
	}
	v := Volume{
		Member: chain.Member{Ref: chain.Ref{Cluster: s.config.Cluster, Volume: s.config.NewVolumeID()},
			Root: r.Root, Generation: r.SourceGeneration + 1, Predecessor: source, State: chain.Active},
		Shape:       r.Shape,
		Origin:      origin,
		Initialized: true,
		CreatedAt:   s.now(),
	}
	if err := v.Validate(); err != nil {
		panic(fmt.Sprintf("site: fail-over of %s built an invalid member: %v", source, err))
	}
	if err := s.place(&v, holders); err != nil {
		return Volume{}, err
	}
	// The clone ships back to the source's site from the snapshot it started
	// from, which that site holds under the same GUID: only the delta travels.
	p, err := replication.New(v.Ref, source.Cluster, s.config.Interval, s.config.Retention,
		replication.Base{Volume: v.Origin.Dataset, Snapshot: v.Origin.Snapshot, GUID: v.Origin.GUID}, s.now())
	if err != nil {
		return Volume{}, err
	}
	r.ClonedInto = v.Ref
	if err := s.store.PutVolume(v); err != nil {
		return Volume{}, err
	}
	if err := s.store.PutReplica(r); err != nil {
		return Volume{}, err
	}
	if err := s.store.PutPairing(Pairing{Pairing: *p}); err != nil {
		return Volume{}, err
	}
	s.announce(&v)
	return v, nil
}

// failoverOrigin chooses what a fail-over clones: the newest snapshot the
// replica received, and the nodes holding it. A source that was lost before it
// shipped anything -- right after a relocation made it -- still started from
// a snapshot this site holds as a snapshot of its own predecessor (the final
// sync of that relocation): that one, then, and only the source's own writes
// are lost.
func (s *Site) failoverOrigin(r Replica) (Origin, []string, error) {
	if snapshot, holders, ok := r.newest(); ok {
		return Origin{Dataset: r.Dataset(), Snapshot: snapshot.Name, GUID: snapshot.GUID}, holders, nil
	}
	if r.OriginGUID != "" {
		volumes, err := s.store.Volumes()
		if err != nil {
			return Origin{}, nil, err
		}
		for _, v := range volumes {
			i := slices.IndexFunc(v.Snapshots, func(sn SnapshotInfo) bool { return sn.GUID == r.OriginGUID })
			if v.Root == r.Root && i >= 0 && v.Home != "" {
				return Origin{Dataset: v.Dataset(), Snapshot: v.Snapshots[i].Name, GUID: r.OriginGUID}, []string{v.Home}, nil
			}
		}
	}
	return Origin{}, nil, fmt.Errorf("%w: replica of %s", ErrNoSnapshot, r.Source)
}

// checkHandover asks source's site whether a planned fail-over may proceed:
// the source must be fenced and its final snapshot received here.
func (s *Site) checkHandover(source chain.Ref, r Replica) error {
	h, err := s.peers.Handover(source)
	if errors.Is(err, chain.ErrUnreachable) {
		return fmt.Errorf("%w: cannot ask %s about %s: %w", ErrPeerUnreachable, source.Cluster, source, err)
	}
	if err != nil {
		return fmt.Errorf("failed to ask %s about %s: %w", source.Cluster, source, err)
	}
	switch {
	case h.State == chain.Active:
		return fmt.Errorf("%w: %s is Active on %s", ErrPeerPrimary, source, source.Cluster)
	case !h.Successor.IsZero():
		return fmt.Errorf("%w: %s was already followed by %s", ErrConflict, source, h.Successor)
	case h.Final == "":
		return fmt.Errorf("%w: %s is %s and has not shipped its final snapshot", ErrFinalSyncPending, source, h.State)
	}
	newest, _, _ := r.newest()
	if newest.GUID != h.Final {
		return fmt.Errorf("%w: %s's final snapshot %s is not the newest received here (%s)",
			ErrFinalSyncPending, source, h.Final, newest.Name)
	}
	return nil
}

// announce tells the predecessor's site about its successor. A failure is not
// an error: Tick keeps announcing until the site answers.
func (s *Site) announce(v *Volume) {
	if v.Predecessor.IsZero() || v.SuccessorAnnounced {
		return
	}
	err := s.peers.LearnSuccessor(v.Predecessor, v.Ref)
	if err == nil || errors.Is(err, ErrNotFound) {
		v.SuccessorAnnounced = true
		_ = s.store.PutVolume(*v)
	}
}

// Handover answers another site's Failover: the state of a local member and,
// once it is fenced and its final snapshot shipped, that snapshot's GUID.
func (s *Site) Handover(member chain.Ref) (Handover, error) {
	v, err := s.Volume(member)
	if err != nil {
		return Handover{}, err
	}
	h := Handover{State: v.State, Successor: v.Successor}
	if v.State != chain.Demoted || !v.Successor.IsZero() {
		return h, nil
	}
	p, found, err := s.pairing(member)
	if err != nil || !found {
		return h, err
	}
	if p.InSyncSince(v.FencedAt) {
		if newest, ok := p.NewestShipped(); ok {
			h.Final = newest.GUID
		}
	}
	return h, nil
}

func (s *Site) pairing(source chain.Ref) (Pairing, bool, error) {
	pairings, err := s.store.Pairings()
	if err != nil {
		return Pairing{}, false, err
	}
	i := slices.IndexFunc(pairings, func(p Pairing) bool { return p.Source == source })
	if i < 0 {
		return Pairing{}, false, nil
	}
	return pairings[i], true, nil
}
