package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
)

// windowEvents is how many events before a violation its report shows.
const windowEvents = 20

// event records one line of the timeline (and of the event log).
func (w *World) event(site string, kind reports.EventKind, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	w.timeline = append(w.timeline, reports.Event{At: w.Sim.Now(), Site: site, Kind: kind, Detail: detail})
	w.Sim.Logf(string(kind), "%s %s", site, detail)
}

// violate records a broken invariant with the events that led to it.
func (w *World) violate(invariant, message string) {
	window := w.timeline[max(0, len(w.timeline)-windowEvents):]
	w.violations = append(w.violations, reports.Violation{Invariant: invariant, Message: message,
		At: w.Sim.Now(), Window: slices.Clone(window)})
	w.event("", reports.EventViolation, "%s: %s", invariant, message)
}

func (w *World) offset(t time.Time) string { return t.Sub(simEpoch(w)).String() }

func simEpoch(w *World) time.Time { return w.Sim.Now().Add(-w.Sim.Elapsed()) }

// observe10s runs the continuous checks and batches the timeline's writes.
func (w *World) observeTick() {
	for _, site := range sortedKeys(w.writes) {
		if n := w.writes[site]; n > 0 {
			w.timeline = append(w.timeline, reports.Event{At: w.Sim.Now(), Site: site, Kind: reports.EventWrite,
				Detail: fmt.Sprintf("%d acknowledged operations", n)})
		}
	}
	clear(w.writes)
	w.recordSyncs()
	for _, problem := range w.CheckChains() {
		key := problem.Error()
		if !w.reported[key] {
			w.reported[key] = true
			w.violate("chain", key)
		}
	}
}

// recordSyncs adds every shipment completed since the last look.
func (w *World) recordSyncs() {
	for _, s := range w.sites {
		pairings, err := s.Store.Pairings()
		if err != nil {
			continue
		}
		for _, p := range pairings {
			key := p.Source.String() + "@" + p.Last.Snapshot
			if p.Last.Snapshot == "" || w.synced[key] {
				continue
			}
			w.synced[key] = true
			target := w.Site(string(p.Target))
			w.timeline = append(w.timeline, reports.Event{At: p.Last.At, Site: s.Name, Kind: reports.EventSync,
				Detail: fmt.Sprintf("%s shipped %s to %s: %d bytes in %s", p.Source.Volume, p.Last.Snapshot,
					target.Name, p.Last.Bytes, p.Last.Duration)})
			w.syncs = append(w.syncs, reports.Sync{Volume: string(p.Source.Volume), From: s.Name, To: target.Name,
				At: p.Last.At, BytesShipped: p.Last.Bytes})
		}
	}
}

// Chains draws every chain as the sites record it.
func (w *World) Chains() ([]reports.Chain, error) {
	records := w.records()
	var out []reports.Chain
	for _, root := range sortedRefs(records) {
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

// Violations are the invariants broken so far.
func (w *World) Violations() []reports.Violation { return slices.Clone(w.violations) }

// Timeline is what happened so far.
func (w *World) Timeline() []reports.Event { return slices.Clone(w.timeline) }

// Syncs are the shipments completed so far.
func (w *World) Syncs() []reports.Sync { return slices.Clone(w.syncs) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedRefs[V any](m map[chain.Ref]V) []chain.Ref {
	refs := make([]chain.Ref, 0, len(m))
	for r := range m {
		refs = append(refs, r)
	}
	slices.SortFunc(refs, func(a, b chain.Ref) int {
		if a.String() < b.String() {
			return -1
		}
		return 1
	})
	return refs
}
