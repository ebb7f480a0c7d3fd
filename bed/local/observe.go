package local

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// event records one line of the timeline and of the bed's log.
func (b *Bed) event(site string, kind reports.EventKind, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	b.Record(reports.Event{At: time.Now(), Site: site, Kind: kind, Detail: detail})
	fmt.Fprintf(b.options.Log, "local bed: %8s %-6s %s\n", time.Since(b.started).Round(time.Millisecond), site, detail)
}

// violate records a broken invariant with the events that led to it.
func (b *Bed) violate(invariant, message string) {
	b.Violate(time.Now(), invariant, message)
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
				b.Record(reports.Event{At: time.Now(), Site: s, Kind: reports.EventWrite,
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
	for _, problem := range records.Check(b.checker) {
		if key := problem.Error(); b.FirstReport(key) {
			b.violate("chain", key)
		}
	}
}

// records gathers every chain's members from every site's API server.
func (b *Bed) records() (bed.Records, error) {
	out := bed.Records{}
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

// Chains draws every chain as the sites record it.
func (b *Bed) Chains() ([]reports.Chain, error) {
	records, err := b.records()
	if err != nil {
		return nil, err
	}
	var clusters []chain.ClusterID
	names := map[chain.ClusterID]string{}
	pairings := map[chain.Ref]core.Pairing{}
	for _, s := range b.sites {
		clusters = append(clusters, s.cluster)
		names[s.cluster] = s.name
		ps, err := s.store.Pairings()
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			pairings[p.Source] = p
		}
	}
	return records.Draw(clusters, func(c chain.ClusterID) string { return names[c] }, pairings)
}
