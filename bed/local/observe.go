package local

import (
	"fmt"
	"slices"
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
	fmt.Fprintf(b.options.Log, "local bed: %8s %-6s %s\n", time.Since(b.started).Round(time.Millisecond), site, detail)
}

// violate records a broken invariant with the events that led to it.
func (b *Bed) violate(invariant, message string) {
	window := b.timeline[max(0, len(b.timeline)-windowEvents):]
	b.violations = append(b.violations, reports.Violation{Invariant: invariant, Message: message, At: time.Now(),
		Window: slices.Clone(window)})
	b.event("", reports.EventViolation, "%s: %s", invariant, message)
}

// observe enters the applications' writes in the timeline and checks every
// chain's invariants over what the sites' API servers record.
func (b *Bed) observe() {
	b.lastCheck = time.Now()
	for _, a := range b.apps.All() {
		name := a.Spec.Name
		for _, s := range SiteNames {
			if n := b.writes[name][s]; n > 0 {
				b.timeline = append(b.timeline, reports.Event{At: time.Now(), Site: s, Kind: reports.EventWrite,
					Detail: fmt.Sprintf("%s: %d acknowledged operations", name, n)})
			}
		}
		clear(b.writes[name])
	}
	records, err := b.records()
	if err != nil {
		// A record that cannot be read is no invariant broken; the next
		// look reads it again.
		fmt.Fprintf(b.options.Log, "local bed: reading the records: %v\n", err)
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
}

// records gathers every chain's members from every site's API server: the
// omniscient view no component has, which the checkers judge.
func (b *Bed) records() (map[chain.Ref][]chain.Member, error) {
	out := map[chain.Ref][]chain.Member{}
	for _, s := range b.sites {
		volumes, err := s.store.Volumes()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		for _, v := range volumes {
			out[v.Root] = append(out[v.Root], v.Member)
		}
	}
	return out, nil
}

func sortedRoots(records map[chain.Ref][]chain.Member) []chain.Ref {
	roots := make([]chain.Ref, 0, len(records))
	for root := range records {
		roots = append(roots, root)
	}
	slices.SortFunc(roots, func(a, b chain.Ref) int {
		switch {
		case a.String() < b.String():
			return -1
		case a.String() > b.String():
			return 1
		}
		return 0
	})
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

// Chains draws every chain as the sites record it.
func (b *Bed) Chains() ([]reports.Chain, error) {
	records, err := b.records()
	if err != nil {
		return nil, err
	}
	var clusters []chain.ClusterID
	siteOf := map[chain.ClusterID]*site{}
	for _, s := range b.sites {
		clusters = append(clusters, s.cluster)
		siteOf[s.cluster] = s
	}
	pairings := map[chain.Ref]core.Pairing{}
	for _, s := range b.sites {
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
				member.Site = s.name
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

// Violations are the invariants broken so far.
func (b *Bed) Violations() []reports.Violation { return slices.Clone(b.violations) }

// Timeline is what happened so far.
func (b *Bed) Timeline() []reports.Event { return slices.Clone(b.timeline) }
