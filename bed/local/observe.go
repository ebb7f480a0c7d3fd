package local

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
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
	records, err := b.recorded().Records()
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

// recorded are the sites as their records are read: every chain on them
// is the bed's.
func (b *Bed) recorded() bed.RecordedSites {
	var out bed.RecordedSites
	for _, s := range b.sites {
		out.Sites = append(out.Sites, bed.RecordedSite{Name: s.name, Cluster: s.cluster, Store: s.store})
	}
	return out
}

// Chains draws every chain as the sites record it.
func (b *Bed) Chains() ([]reports.Chain, error) { return b.recorded().Chains() }
