package real

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// windowEvents is how many events before a violation its report shows.
const windowEvents = 20

// event records one line of the timeline and of the bed's log.
func (b *Bed) event(site string, kind reports.EventKind, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	b.timeline = append(b.timeline, reports.Event{At: time.Now(), Site: site, Kind: kind, Detail: detail})
	b.logf(site, "%s", detail)
	b.lastProgress = time.Now() // what it waits for is said after progressPeriod without news
}

// logf prints one line of the bed's log, not the timeline: the time since
// the bed attached, the site it is about ("" for none), what happened.
func (b *Bed) logf(site, format string, args ...any) {
	fmt.Fprintf(b.options.Log, "real bed: [%6.1f s] %-6s %s\n", time.Since(b.started).Seconds(), site, fmt.Sprintf(format, args...))
}

// violate records a broken invariant with the events that led to it.
func (b *Bed) violate(invariant, message string) {
	window := b.timeline[max(0, len(b.timeline)-windowEvents):]
	b.violations = append(b.violations, reports.Violation{Invariant: invariant, Message: message, At: time.Now(),
		Window: slices.Clone(window)})
	b.event("", reports.EventViolation, "%s: %s", invariant, message)
}

// observe enters the applications' writes in the timeline and checks every
// chain's invariants over what both sites' API servers record.
func (b *Bed) observe() {
	b.lastCheck = time.Now()
	for _, name := range b.appOrder {
		a := b.apps[name]
		if a.web != nil {
			if key, refusing := a.web.drainWrites(a.writes); refusing != "" && !b.reported[key] {
				b.reported[key] = true
				b.violate("application: the primary refused a write", refusing)
			}
		}
		for _, s := range b.Sites() {
			if n := a.writes[s]; n > 0 {
				b.timeline = append(b.timeline, reports.Event{At: time.Now(), Site: s, Kind: reports.EventWrite,
					Detail: fmt.Sprintf("%s: %d acknowledged operations", name, n)})
			}
		}
		clear(a.writes)
	}
	records, err := b.records()
	if err != nil {
		// A record that cannot be read (a partitioned API server answers
		// late) is no invariant broken; the next look reads it again.
		b.logf("", "reading the records: %v", err)
		return
	}
	for _, root := range sortedRoots(records) {
		for _, problem := range b.checker.Check(root, records[root]) {
			if key := problem.Error(); !b.reported[key] {
				b.reported[key] = true
				b.violate("chain", key)
			}
		}
	}
	b.checkPrimariesWritable(records)
	b.recordSyncs(records)
}

// records gathers every chain's members from both sites' API servers: the
// omniscient view no component has, which the checkers judge. Only the
// run's chains: the bed's sites outlive scenarios.
func (b *Bed) records() (map[chain.Ref][]chain.Member, error) {
	ours := map[chain.Ref]bool{}
	for _, a := range b.apps {
		for _, v := range a.volumes {
			if root, err := chain.ParseRef(v.handle); err == nil {
				ours[root] = true
			}
		}
	}
	out := map[chain.Ref][]chain.Member{}
	for _, s := range b.sites {
		volumes, err := s.store.Volumes()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, v := range volumes {
			if ours[v.Root] {
				out[v.Root] = append(out[v.Root], v.Member)
			}
		}
	}
	return out, nil
}

func sortedRoots(records map[chain.Ref][]chain.Member) []chain.Ref {
	roots := make([]chain.Ref, 0, len(records))
	for root := range records {
		roots = append(roots, root)
	}
	slices.SortFunc(roots, func(a, b chain.Ref) int { return strings.Compare(a.String(), b.String()) })
	return roots
}

// recordsDirectory answers chain walks from the records read once.
type recordsDirectory map[chain.Ref][]chain.Member

func (d recordsDirectory) Members(cluster chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	var out []chain.Member
	for _, m := range d[root] {
		if m.Ref.Cluster == cluster {
			out = append(out, m)
		}
	}
	return out, nil
}

// Chains draws every chain of the run as the sites record it.
func (b *Bed) Chains() ([]reports.Chain, error) {
	records, err := b.records()
	if err != nil {
		return nil, err
	}
	var clusters []chain.ClusterID
	siteOf := map[chain.ClusterID]*site{}
	pairings := map[chain.Ref]core.Pairing{}
	for _, s := range b.sites {
		clusters = append(clusters, s.ID)
		siteOf[s.ID] = s
		ps, err := s.store.Pairings()
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			pairings[p.Source] = p
		}
	}
	var out []reports.Chain
	for _, root := range sortedRoots(records) {
		walk, err := chain.Resolve(recordsDirectory(records), clusters, root)
		if err != nil {
			return nil, err
		}
		c := reports.Chain{Handle: root.String()}
		for _, m := range walk.Walk {
			member := reports.Member{Ref: m.Ref.String(), Generation: m.Generation, State: m.State.String()}
			if s := siteOf[m.Ref.Cluster]; s != nil {
				member.Site = s.Site
			}
			if p, ok := pairings[m.Ref]; ok {
				member.LastSync = p.Last.At
			}
			c.Members = append(c.Members, member)
		}
		out = append(out, c)
	}
	return out, nil
}
