package bed

import (
	"fmt"
	"slices"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/core"
)

// SyncLog gathers, from the sites' records, every shipment a pairing
// completed, once each (a pairing's Last names its newest): the bytes its
// stream carried against the bytes the application changed between its
// base and its snapshot, which is about what an incremental stream should
// carry. Every bed that reads its sites' pairings records its syncs so; the
// changed bytes are the bed's to measure (its applications are its own).
// It is not safe for concurrent use.
type SyncLog struct {
	seen  map[string]bool
	syncs []reports.Sync
}

// Changed fills in a new shipment's BytesChanged (and Failback) from what
// the bed's application wrote; it may leave them zero when it cannot tell.
type Changed func(p core.Pairing, sync *reports.Sync)

// Record adds the shipments of site's pairings not recorded yet; to names
// the site a pairing's target cluster is (its name in the scenario). It
// returns an event per new shipment, for the bed's timeline.
func (l *SyncLog) Record(site string, pairings []core.Pairing, to func(core.Pairing) string, changed Changed) []reports.Event {
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	var events []reports.Event
	for _, p := range pairings {
		key := p.Source.String() + "@" + p.Last.Snapshot
		if p.Last.Snapshot == "" || l.seen[key] {
			continue
		}
		l.seen[key] = true
		// One stream went to each receiving node: the pairing's bytes
		// count every copy.
		receivers := max(1, len(p.Receivers))
		sync := reports.Sync{Volume: string(p.Source.Volume), From: site, To: to(p),
			At: p.Last.At, BytesShipped: p.Last.Bytes / uint64(receivers), Receivers: receivers}
		if changed != nil {
			changed(p, &sync)
		}
		events = append(events, reports.Event{At: p.Last.At, Site: site, Kind: reports.EventSync,
			Detail: fmt.Sprintf("%s shipped %s to %s: %d bytes (to %d nodes) for %d bytes changed in %s", p.Source.Volume,
				p.Last.Snapshot, sync.To, sync.BytesShipped, receivers, sync.BytesChanged, p.Last.Duration)})
		l.syncs = append(l.syncs, sync)
	}
	return events
}

// Syncs are the shipments recorded so far, in the order they were found.
func (l *SyncLog) Syncs() []reports.Sync { return slices.Clone(l.syncs) }
