package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/replication"
	"github.com/baton-dr/baton/workload"
)

// event records one line of the timeline (and of the event log).
func (w *World) event(site string, kind reports.EventKind, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	w.Record(reports.Event{At: w.Sim.Now(), Site: site, Kind: kind, Detail: detail})
	w.Sim.Logf(string(kind), "%s %s", site, detail)
}

// violate records a broken invariant with the events that led to it.
func (w *World) violate(invariant, message string) {
	w.Violate(w.Sim.Now(), invariant, message)
	w.event("", reports.EventViolation, "%s: %s", invariant, message)
}

func (w *World) offset(t time.Time) string { return t.Sub(simEpoch(w)).String() }

func simEpoch(w *World) time.Time { return w.Sim.Now().Add(-w.Sim.Elapsed()) }

// observe10s runs the continuous checks and batches the timeline's writes.
func (w *World) observeTick() {
	defer w.unfaulted()()
	for _, site := range slices.Sorted(maps.Keys(w.writes)) {
		if n := w.writes[site]; n > 0 {
			w.Record(reports.Event{At: w.Sim.Now(), Site: site, Kind: reports.EventWrite,
				Detail: fmt.Sprintf("%d acknowledged operations", n)})
		}
	}
	clear(w.writes)
	w.recordSyncs()
	for _, problem := range w.CheckChains() {
		if key := problem.Error(); w.FirstReport(key) {
			w.violate("chain", key)
		}
	}
	w.checkSplitBrains()
}

// checkSplitBrains holds the invariant that DRBD never splits a volume
// inside a site: the bed only fences nodes that are down, so a replica gone
// StandAlone means the agent promoted where it must not have.
func (w *World) checkSplitBrains() {
	for _, s := range w.sites {
		volumes, err := readOnlyVolumes(s.Store)
		if err != nil {
			continue
		}
		for _, v := range volumes {
			if len(v.StandAlone) == 0 {
				continue
			}
			key := fmt.Sprintf("split brain: %s on %s: %v", v.Ref, s.Name, v.StandAlone)
			if w.FirstReport(key) {
				w.violate("volume: split brain inside a site", key)
			}
		}
	}
}

// readOnlyVolumes reads a site's volume records for a check that changes
// none of them: lent by a store that lends (core.Lender), else listed.
func readOnlyVolumes(store core.Store) ([]core.Volume, error) {
	if lender, ok := store.(core.Lender); ok {
		return lender.LendVolumes(), nil
	}
	return store.Volumes()
}

// recordSyncs adds every shipment completed since the last look, with the
// bytes the application changed that the stream had to carry, and holds the
// volume invariant "fail-back ships only the delta".
func (w *World) recordSyncs() {
	for _, s := range w.sites {
		pairings, err := s.Store.Pairings()
		if err != nil {
			continue
		}
		to := func(p core.Pairing) string { return w.Site(string(p.Target)).Name }
		changed := func(p core.Pairing, sync *reports.Sync) { w.measureChange(s, p, sync) }
		w.Record(w.syncs.Record(s.Name, pairings, to, changed)...)
	}
}

// deltaSlackBytes allows a stream its framing, DRBD's metadata block and the
// writes of a step that ran at the very instant of a snapshot.
const deltaSlackBytes = 64 << 10

// measureChange fills in what the application changed between the stream's
// base and its snapshot, when the member serves an application: from the
// previous shipment of the pairing, or -- for a fail-over clone's first
// delta back, the fail-back -- from the snapshot the clone started from.
func (w *World) measureChange(s *Site, p core.Pairing, sync *reports.Sync) {
	i := slices.IndexFunc(p.Snapshots, func(sn replication.Snapshot) bool { return sn.Name == p.Last.Snapshot })
	v, err := s.Control.Volume(p.Source)
	if i < 0 || err != nil {
		return
	}
	// The snapshot holds the writes up to when the node took it, which the
	// site does not know: TakenAt (when it was ordered) is a lower bound,
	// the shipment's start an upper one. The delta is judged against the
	// most the snapshot can hold, and the next one starts where this one can
	// start at the earliest.
	until := p.Last.At.Add(-p.Last.Duration)
	after, shippedBefore := w.shippedAt[p.Source]
	w.shippedAt[p.Source] = p.Snapshots[i].TakenAt
	if !shippedBefore && strings.HasPrefix(v.Origin.Dataset, "rep-") {
		taken, ok := w.takenAt(v.Origin.GUID)
		if !ok {
			return
		}
		after, sync.Failback = taken, true
	}
	model, volume, ok := w.modelOf(v.Root)
	if !ok {
		return
	}
	stats, err := model.ChangesBetween(volume, after, until)
	if err != nil {
		return
	}
	sync.BytesChanged = stats.BlockBytes
	limit := stats.BlockBytes + stats.BlockBytes/50 + deltaSlackBytes
	if sync.Failback && sync.BytesShipped > limit {
		w.violate("volume: fail-back shipped more than the delta", fmt.Sprintf(
			"%s's first stream back to %s carried %d bytes for %d bytes the application changed since the clone's origin",
			p.Source, sync.To, sync.BytesShipped, stats.BlockBytes))
	}
}

// takenAt finds when a snapshot (by GUID) was taken, in any site's pairings.
func (w *World) takenAt(guid string) (time.Time, bool) {
	for _, s := range w.sites {
		pairings, err := s.Store.Pairings()
		if err != nil {
			continue
		}
		for _, p := range pairings {
			for _, sn := range p.Snapshots {
				if sn.GUID == guid {
					return sn.TakenAt, true
				}
			}
		}
	}
	return time.Time{}, false
}

// modelOf finds the application and the volume name a chain serves.
func (w *World) modelOf(root chain.Ref) (workload.Workload, string, bool) {
	for _, a := range w.apps.All() {
		for _, v := range a.Volumes {
			if v.Handle == root.String() {
				return a.Model, v.Name, true
			}
		}
	}
	return nil, "", false
}

// Chains draws every chain as the sites record it.
func (w *World) Chains() ([]reports.Chain, error) {
	defer w.unfaulted()()
	records := w.records()
	var out []reports.Chain
	for _, root := range records.Roots() {
		walk, err := chain.Resolve(omniscient{w}, w.clusterIDs(), root)
		if err != nil {
			return nil, err
		}
		c := reports.Chain{Handle: root.String()}
		for _, m := range walk.Walk {
			s := w.Site(string(m.Ref.Cluster))
			member := reports.Member{Site: s.Name, Ref: m.Ref.String(), Generation: m.Generation, State: m.State.String()}
			if p, found, err := s.Control.Pairing(m.Ref); err == nil && found {
				member.LastSync = p.Last.At
			}
			c.Members = append(c.Members, member)
		}
		out = append(out, c)
	}
	return out, nil
}

// omniscient reads every site's records, whatever the network says.
type omniscient struct{ w *World }

func (o omniscient) Members(cluster chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	return o.w.Site(string(cluster)).Control.Members(root)
}

func (w *World) clusterIDs() []chain.ClusterID {
	var out []chain.ClusterID
	for _, s := range w.sites {
		out = append(out, s.Cluster)
	}
	return out
}

// Syncs are the shipments completed so far.
func (w *World) Syncs() []reports.Sync { return w.syncs.Syncs() }
