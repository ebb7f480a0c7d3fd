package bed

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/reports"
)

// linksDouble stands in for a bed's links: it records every set of cuts
// it is asked to apply and fails while fail is set.
type linksDouble struct {
	applied [][]Path
	fail    error
}

func (l *linksDouble) apply(cuts []Path) error {
	l.applied = append(l.applied, slices.Clone(cuts))
	return l.fail
}

// last is the cuts of the last Apply, or "none" when none was asked.
func (l *linksDouble) last() string {
	if len(l.applied) == 0 {
		return "none"
	}
	return fmt.Sprint(l.applied[len(l.applied)-1])
}

type journalDouble struct{ events, violations []string }

func newPartitions() (*Partitions, *linksDouble, *journalDouble) {
	links, journal := &linksDouble{}, &journalDouble{}
	p := &Partitions{Sites: []string{"site-a", "site-b"}, Apply: links.apply,
		Event: func(site string, kind reports.EventKind, format string, args ...any) {
			journal.events = append(journal.events, site+": "+fmt.Sprintf(format, args...))
		},
		Violate: func(invariant, message string) {
			journal.violations = append(journal.violations, invariant+": "+message)
		},
	}
	return p, links, journal
}

// A partition adds to the cuts in force, one path a way: a one-way
// partition after a two-way one leaves both paths cut, as the simulation's
// network does; Heal lifts both paths between the two, and only theirs.
func TestPartitionsAddOneWayCutsAndHealLiftsBothWays(t *testing.T) {
	p, links, journal := newPartitions()
	p.Partition("site-a", "site-b", true)
	p.Partition("site-a", "site-b", false)
	p.Partition("hub", "site-b", false)
	if got, want := links.last(), "[{hub site-b} {site-a site-b} {site-b site-a}]"; got != want {
		t.Fatalf("cuts applied %s, want %s", got, want)
	}
	if len(links.applied) != 2 {
		t.Errorf("%d Apply calls for two changes: %v", len(links.applied), links.applied)
	}
	p.Heal("site-b", "site-a")
	if got, want := links.last(), "[{hub site-b}]"; got != want {
		t.Errorf("after healing the sites, cuts %s, want %s", got, want)
	}
	p.HealAll()
	if got := links.last(); got != "[]" {
		t.Errorf("after HealAll, cuts %s", got)
	}
	wantEvents := []string{"site-a: partition site-a from site-b (both ways: true)", "site-a: partition site-a from site-b (both ways: false)",
		"hub: partition hub from site-b (both ways: false)", "site-b: heal site-b and site-a", ": heal every partition"}
	if !slices.Equal(journal.events, wantEvents) || len(journal.violations) != 0 {
		t.Errorf("events %q, violations %q", journal.events, journal.violations)
	}
}

// The hub reaches a site only while neither path between them is cut,
// whichever way the partition named them.
func TestPartitionsTheHubReachesASiteWhileNeitherPathIsCut(t *testing.T) {
	p, _, _ := newPartitions()
	if !p.Reaches("site-a") || !p.Reaches("site-b") {
		t.Fatal("the hub reaches no site before any partition")
	}
	p.Partition("site-a", "hub", false)
	if p.Reaches("site-a") || !p.Reaches("site-b") {
		t.Errorf("site-a cut one way from the hub: reaches site-a %v, site-b %v", p.Reaches("site-a"), p.Reaches("site-b"))
	}
	p.Partition("site-b", "site-a", true)
	if !p.Reaches("site-b") {
		t.Error("a cut between the sites keeps the hub from site-b")
	}
	p.Heal("hub", "site-a")
	if !p.Reaches("site-a") {
		t.Error("healed, the hub still does not reach site-a")
	}
}

// A node, or a name that is no endpoint, is refused as a violation with
// nothing applied; a partition of an endpoint from itself cuts nothing.
func TestPartitionsRefuseWhatIsNoEndpoint(t *testing.T) {
	p, links, journal := newPartitions()
	p.Partition("site-a/node-1", "site-b", true)
	p.Heal("site-a", "site-c")
	p.Partition("site-a", "site-a", true)
	if len(links.applied) != 0 {
		t.Errorf("applied %v", links.applied)
	}
	if len(journal.violations) != 2 || !strings.HasPrefix(journal.violations[0], "bed: partition failed: partition site-a/node-1 from site-b") ||
		!strings.HasPrefix(journal.violations[1], "bed: heal failed: heal site-a and site-c") {
		t.Errorf("violations %q", journal.violations)
	}
}

// Nothing changed, nothing is applied (a HealAll with no cut costs the bed
// nothing); once an Apply failed, the next change or HealAll applies again
// even when the cuts did not change, until it succeeds.
func TestPartitionsApplyAgainAfterAFailure(t *testing.T) {
	p, links, journal := newPartitions()
	p.HealAll()
	if len(links.applied) != 0 {
		t.Fatalf("HealAll with nothing cut applied %v", links.applied)
	}
	links.fail = errors.New("nft: no such table")
	p.Partition("site-a", "site-b", true)
	if len(journal.violations) != 1 || !strings.Contains(journal.violations[0], "nft: no such table") {
		t.Fatalf("violations %q", journal.violations)
	}
	if !p.Reaches("site-a") {
		t.Error("a cut between the sites keeps the hub from site-a")
	}
	links.fail = nil
	if err := p.Cut("site-a", "site-b", true); err != nil || len(links.applied) != 2 {
		t.Fatalf("the same cut after a failure: %v, applied %v", err, links.applied)
	}
	if err := p.Cut("site-a", "site-b", true); err != nil || len(links.applied) != 2 {
		t.Errorf("the same cut once applied: %v, applied %v", err, links.applied)
	}
	if err := p.Clear(); err != nil || links.last() != "[]" || len(links.applied) != 3 {
		t.Errorf("Clear: %v, applied %v", err, links.applied)
	}
}
