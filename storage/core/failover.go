package core

import (
	"crypto/sha1"
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
	return perform(s, func(d Decisions, told *Told) (Volume, Effects, error) { return d.Failover(source, force, told) })
}

// Failover decides a fail-over (Site.Failover); told is source's site's
// Handover, which a fail-over without force asks for.
func (d Decisions) Failover(source chain.Ref, force bool, told *Told) (Volume, Effects, error) {
	return decide(d.s, func(op *Site) (Volume, error) { return op.failover(source, force, told) })
}

// A fail-over writes three records, each keyed by the successor's ref, which
// is a function of the source (successorRef): every attempt names the same
// member, so a retry completes what an attempt that failed half-way wrote
// and never draws a second successor. They are written in the order that
// leaves every prefix harmless: the successor's pairing (alone it is an
// orphan nothing reads, which the next attempt replaces), the successor
// itself (the commit point: from here the chain ends at it, and an attempt
// finds it by its predecessor), then the replica closed into it (which
// readers derive from the successor until it is written: closedInto).
func (s *Site) failover(source chain.Ref, force bool, told *Told) (Volume, error) {
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
	volumes, err := s.store.Volumes()
	if err != nil {
		return Volume{}, err
	}
	if i := slices.IndexFunc(volumes, func(v Volume) bool { return v.Predecessor == source }); i >= 0 {
		return volumes[i], s.completeFailover(r, volumes[i])
	}
	ref := r.ClonedInto // closed into a member whose record is gone: make that one
	if ref.IsZero() {
		ref = s.successorRef(source)
	}
	if !force {
		q := Question{Kind: AskHandover, Member: source}
		h, ok := answerTo(told, q)
		if !ok {
			s.ask(q)
			return Volume{}, nil
		}
		if err := checkHandover(source, r, h); err != nil {
			return Volume{}, err
		}
	}
	origin, holders, err := s.failoverOrigin(r)
	if err != nil {
		return Volume{}, err
	}
	v := Volume{
		Member: chain.Member{Ref: ref, Root: r.Root, Generation: r.SourceGeneration + 1, Predecessor: source,
			State: chain.Active},
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
	// from, which that site holds under the same GUID: only the delta
	// travels. A pairing an attempt before left alone is nobody's yet: this
	// one, of this attempt's origin, replaces it.
	p, err := replication.New(v.Ref, source.Cluster, s.config.Interval, s.config.Retention,
		replication.Base{Volume: v.Origin.Dataset, Snapshot: v.Origin.Snapshot, GUID: v.Origin.GUID}, s.now())
	if err != nil {
		return Volume{}, err
	}
	if err := s.store.PutPairing(Pairing{Pairing: *p}); err != nil {
		return Volume{}, err
	}
	if err := s.store.PutVolume(v); err != nil {
		return Volume{}, err
	}
	return v, s.completeFailover(r, v)
}

// completeFailover writes what a fail-over leaves after its successor v:
// the replica closed into it, and the announcement to the source's site.
func (s *Site) completeFailover(r Replica, v Volume) error {
	if r.ClonedInto != v.Ref {
		if !r.ClonedInto.IsZero() {
			return fmt.Errorf("%w: the replica of %s is closed into %s, but its successor here is %s",
				ErrConflict, r.Source, r.ClonedInto, v.Ref)
		}
		r.ClonedInto = v.Ref
		if err := s.store.PutReplica(r); err != nil {
			return err
		}
	}
	s.announce(v)
	return nil
}

// successorRef is the member a fail-over of source makes on this site: a
// name-based UUID (RFC 9562 version 5) of source in this cluster's
// namespace, so that every attempt of one fail-over names the same member.
// A member is failed over once; a later fail-over is of a later member.
func (s *Site) successorRef(source chain.Ref) chain.Ref {
	h := sha1.New()
	h.Write([]byte("baton fail-over successor\x00" + string(s.config.Cluster) + "\x00" + source.String()))
	sum := h.Sum(nil)
	sum[6] = sum[6]&0x0f | 0x50 // version 5
	sum[8] = sum[8]&0x3f | 0x80 // RFC 9562 variant
	id := fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	return chain.Ref{Cluster: s.config.Cluster, Volume: chain.VolumeID(id)}
}

// closedInto is the member a replica was failed over into: its ClonedInto,
// or -- while the write that sets it has not landed -- the successor the
// fail-over recorded first.
func closedInto(r Replica, volumes []Volume) chain.Ref {
	if !r.ClonedInto.IsZero() {
		return r.ClonedInto
	}
	for _, v := range volumes {
		if v.Predecessor == r.Source {
			return v.Ref
		}
	}
	return chain.Ref{}
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

// checkHandover tells whether a planned fail-over may proceed, from what
// source's site answered: the source must be fenced and its final snapshot
// received here.
func checkHandover(source chain.Ref, r Replica, told Told) error {
	h, err := told.Handover, told.Err
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

// announce leaves the request that tells the predecessor's site about its
// successor v. Tick leaves it again until the site answered (announced).
func (s *Site) announce(v Volume) {
	if v.Predecessor.IsZero() || v.SuccessorAnnounced || v.Predecessor.Cluster == s.config.Cluster {
		return
	}
	s.send(Request{Kind: AnnounceSuccessor, Member: v.Predecessor, Successor: v.Ref, Root: v.Root})
}

// announced takes in the answer to an announcement: once the predecessor's
// site learned of its successor (or no longer records the predecessor: it was
// reaped and removed), it is not told again.
func (s *Site) announced(a Answer) error {
	if a.Err != nil && !errors.Is(a.Err, ErrNotFound) {
		return nil
	}
	v, err := s.Volume(a.Successor)
	if err != nil || v.SuccessorAnnounced || v.Predecessor != a.Member {
		return ignoreNotFound(err)
	}
	v.SuccessorAnnounced = true
	return s.store.PutVolume(v)
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
	return findRecord(pairings, err, func(p Pairing) bool { return p.Source == source })
}
