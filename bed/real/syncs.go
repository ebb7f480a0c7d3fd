package real

import (
	"slices"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
)

// recordSyncs adds the run's shipments the sites' pairings completed since
// the last look (bed.SyncLog), each with the bytes the application changed
// on the volume in the window its snapshot closed.
func (b *Bed) recordSyncs(records map[chain.Ref][]chain.Member) {
	rootOf := map[chain.Ref]chain.Ref{}
	for root, members := range records {
		for _, m := range members {
			rootOf[m.Ref] = root
		}
	}
	for _, s := range b.sites {
		pairings, err := s.store.Pairings()
		if err != nil {
			continue // a partitioned API server answers late; the next look reads it again
		}
		pairings = slices.DeleteFunc(pairings, func(p core.Pairing) bool { _, ours := rootOf[p.Source]; return !ours })
		to := func(p core.Pairing) string {
			for _, other := range b.sites {
				if other.ID == p.Target {
					return other.Site
				}
			}
			return string(p.Target)
		}
		changed := func(p core.Pairing, sync *reports.Sync) { b.measureChange(rootOf[p.Source], p, sync) }
		b.Record(b.syncs.Record(s.Site, pairings, to, changed)...)
	}
}

// Syncs are the run's shipments so far: bytes shipped against bytes changed.
func (b *Bed) Syncs() []reports.Sync { return b.syncs.Syncs() }

// measureChange fills in what the application changed on the volume
// between the pairing's previous shipment's snapshot and this one's: for
// a real application the bytes of content its operations sent (posts,
// uploads, files, issues: not what the database and the file system
// wrote for them), for a workload model the blocks it wrote. As on the
// simulation bed, the snapshot holds the writes up to when the node took
// it, which the records bound by the shipment's start; the root's first
// shipment counts from the application's start, a clone's (the fail-back)
// from the snapshot it was cloned from.
func (b *Bed) measureChange(root chain.Ref, p core.Pairing, sync *reports.Sync) {
	i := slices.IndexFunc(p.Snapshots, func(sn replication.Snapshot) bool { return sn.Name == p.Last.Snapshot })
	if i < 0 {
		return
	}
	until := p.Last.At.Add(-p.Last.Duration)
	after, shippedBefore := b.shippedAt[p.Source]
	b.shippedAt[p.Source] = p.Snapshots[i].TakenAt
	if !shippedBefore && p.Source != root {
		// A clone's first shipment (the fail-back's delta): what changed
		// since the snapshot it was cloned from.
		if origin, err := b.originTakenAt(root.String()); err == nil {
			after, sync.Failback = origin, true
		}
	}
	for _, a := range b.apps.All() {
		for _, v := range a.Volumes {
			if v.Handle != root.String() {
				continue
			}
			if w := b.app(a.Spec.Name).web; w != nil {
				sync.BytesChanged = w.changedBetween(v.Name, after, until)
			} else if stats, err := a.Model.ChangesBetween(v.Name, after, until); err == nil {
				sync.BytesChanged = stats.BlockBytes
			}
			return
		}
	}
}

// change is the content one operation sent to one volume.
type change struct {
	volume string
	at     time.Time // when it was issued
	bytes  int
}
