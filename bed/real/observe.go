package real

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
)

// event records one line of the timeline and of the bed's log.
func (b *Bed) event(site string, kind reports.EventKind, format string, args ...any) {
	detail := fmt.Sprintf(format, args...)
	b.Record(reports.Event{At: time.Now(), Site: site, Kind: kind, Detail: detail})
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
	b.Violate(time.Now(), invariant, message)
	b.event("", reports.EventViolation, "%s: %s", invariant, message)
}

// observe enters the applications' writes in the timeline and checks every
// chain's invariants over what both sites' API servers record.
func (b *Bed) observe() {
	b.lastCheck = time.Now()
	b.noticeBesides()
	for _, x := range b.apps.All() {
		name, a := x.Spec.Name, b.app(x.Spec.Name)
		if a.web != nil {
			if key, refusing := a.web.drainWrites(a.writes); refusing != "" && b.FirstReport(key) {
				b.violate("application: the primary refused a write", refusing)
			}
		}
		for _, s := range b.Sites() {
			if n := a.writes[s]; n > 0 {
				b.Record(reports.Event{At: time.Now(), Site: s, Kind: reports.EventWrite,
					Detail: fmt.Sprintf("%s: %d acknowledged operations", name, n)})
			}
		}
		clear(a.writes)
	}
	records, err := b.recorded().Records()
	if err != nil {
		// A record that cannot be read (a partitioned API server answers
		// late) is no invariant broken; the next look reads it again.
		b.logf("", "reading the records: %v", err)
		return
	}
	for _, problem := range records.Check(b.checker) {
		if key := problem.Error(); b.FirstReport(key) {
			b.violate("chain", key)
		}
	}
	b.checkPrimariesWritable(b.apps.All(), records)
	b.recordSyncs(records)
}

// recorded are both sites as their records are read, keeping only the
// run's chains: the bed's sites outlive scenarios.
func (b *Bed) recorded() bed.RecordedSites {
	ours := map[chain.Ref]bool{}
	for _, a := range b.apps.All() {
		for _, v := range a.Volumes {
			if root, err := chain.ParseRef(v.Handle); err == nil {
				ours[root] = true
			}
		}
	}
	out := bed.RecordedSites{Keep: func(root chain.Ref) bool { return ours[root] }}
	for _, s := range b.sites {
		out.Sites = append(out.Sites, bed.RecordedSite{Name: s.Site, Cluster: s.ID, Store: s.store})
	}
	return out
}

// Chains draws every chain of the run as the sites record it.
func (b *Bed) Chains() ([]reports.Chain, error) { return b.recorded().Chains() }

// noticeBesides puts on the timeline the cuts a bed beside this one (in
// this process) made or lifted since the last look: they hold this bed's
// sites too, and its hub reaches a site only past them (Bed.reaches).
func (b *Bed) noticeBesides() {
	now := inForce.others(b.chaosTable())
	if slices.Equal(now, b.besides) {
		return
	}
	b.besides = now
	if len(now) == 0 {
		b.event("", reports.EventPartition, "the bed beside this one lifted its cuts")
		return
	}
	b.event("", reports.EventPartition, "the bed beside this one cuts %s", pathList(now))
}

// pathList names paths as the timeline does: "from->to, ...".
func pathList(paths []bed.Path) string {
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		names = append(names, p.From+"->"+p.To)
	}
	return strings.Join(names, ", ")
}
