package ramen_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
)

// scriptedBed is a test double of a bed around a ramen.Driver: a clock
// that a round every five seconds moves, a scriptedClient per site, and
// the hub's reach of each site as the test sets it.
type scriptedBed struct {
	now        time.Time
	cut        map[string]bool
	clients    map[string]*scriptedClient
	journal    []string // every call, "site call", in order
	events     []string
	violations []string
	driver     *ramen.Driver
}

const roundPeriod = 5 * time.Second

func newScriptedBed() *scriptedBed {
	b := &scriptedBed{now: time.Unix(1e9, 0), cut: map[string]bool{}, clients: map[string]*scriptedClient{}}
	for _, site := range []string{"site-a", "site-b"} {
		b.clients[site] = &scriptedClient{journal: &b.journal, site: site,
			lastSync: timestamppb.New(time.Unix(1e9, 0))}
	}
	b.driver = &ramen.Driver{Sites: []string{"site-a", "site-b"}, Reaches: func(site string) bool { return !b.cut[site] },
		Until: b.until, Limit: 10 * time.Minute, Event: b.event,
		Violate: func(invariant, message string) { b.violations = append(b.violations, invariant+": "+message) }}
	return b
}

func (b *scriptedBed) event(site string, _ reports.EventKind, format string, args ...any) {
	b.events = append(b.events, site+" "+fmt.Sprintf(format, args...))
}

func (b *scriptedBed) round() {
	b.driver.Round(b.now, func(site string, vr *ramen.VR) {
		vr.Due = b.now.Add(vr.Reconcile(context.Background(), b.clients[site]))
	})
}

func (b *scriptedBed) until(done func() bool, limit time.Duration) bool {
	for end := b.now.Add(limit); !done(); b.now = b.now.Add(roundPeriod) {
		if !b.now.Before(end) {
			return false
		}
		b.round()
	}
	return true
}

// callsOn are the journal's calls on site, in order.
func (b *scriptedBed) callsOn(site string) []string {
	var out []string
	for _, entry := range b.journal {
		if call, ok := strings.CutPrefix(entry, site+" "); ok {
			out = append(out, call)
		}
	}
	return out
}

func TestProtectPromotesEveryVolumeOnItsSiteOnly(t *testing.T) {
	b := newScriptedBed()
	app := b.driver.Add("wp", []string{"db", "files"})
	if err := b.driver.Protect(app, "site-a"); err != nil {
		t.Fatal(err)
	}
	want := []string{"enable", "promote", "info", "enable", "promote", "info"}
	if got := b.callsOn("site-a"); !slices.Equal(got, want) {
		t.Errorf("site-a calls %v, want %v", got, want)
	}
	if got := b.callsOn("site-b"); len(got) != 0 || len(app.VRs("site-b")) != 0 {
		t.Errorf("site-b has VRs %v and calls %v; the hub wished nothing of it", app.VRs("site-b"), got)
	}
}

func TestProtectWithoutAFirstSyncFailsWithTheLastError(t *testing.T) {
	b := newScriptedBed()
	b.clients["site-a"].infoCode = codes.Unavailable
	app := b.driver.Add("wp", []string{"db"})
	err := b.driver.Protect(app, "site-a")
	if err == nil || !strings.Contains(err.Error(), "no first sync within 10m0s: info db on site-a") {
		t.Fatalf("protect without a sync: %v", err)
	}
	b = newScriptedBed()
	b.clients["site-a"].lastSync = nil
	app = b.driver.Add("wp", []string{"db"})
	if err := b.driver.Protect(app, "site-a"); err == nil || !strings.HasSuffix(err.Error(), "no call failed") {
		t.Fatalf("protect without a sync: %v", err)
	}
}

func TestRelocateDemotesAndResyncsTheOldSiteBeforePromotingTheNew(t *testing.T) {
	b := newScriptedBed()
	app := b.driver.Add("wp", []string{"db"})
	if err := b.driver.Protect(app, "site-a"); err != nil {
		t.Fatal(err)
	}
	b.clients["site-a"].resyncReady = []bool{false, true}
	b.journal = nil
	if err := b.driver.Relocate(app, "site-a", "site-b"); err != nil {
		t.Fatal(err)
	}
	want := []string{"site-a demote", "site-a demote", "site-a resync", "site-a demote", "site-a resync",
		"site-b enable", "site-b promote", "site-b info"}
	if !slices.Equal(b.journal, want) {
		t.Errorf("calls %v, want %v", b.journal, want)
	}
}

func TestFailoverWaitsForTheHubToReachTheOldSiteToStopItsTail(t *testing.T) {
	b := newScriptedBed()
	app := b.driver.Add("wp", []string{"db"})
	if err := b.driver.Protect(app, "site-a"); err != nil {
		t.Fatal(err)
	}
	stops := 0
	tail := &ramen.Tail{Site: "site-a", Stop: func() error { stops++; return nil }}
	b.cut["site-a"] = true
	b.clients["site-b"].promoteCodes = []codes.Code{codes.FailedPrecondition}
	if err := b.driver.Failover(app, "site-a", "site-b", tail); err != nil {
		t.Fatal(err)
	}
	if got := b.callsOn("site-b"); !slices.Equal(got, []string{"enable", "promote", "promote(force)", "info"}) {
		t.Errorf("site-b calls %v: a promotion the old primary cannot answer is forced", got)
	}
	b.until(never, 2*time.Minute)
	if app.Tail != tail || stops != 0 || app.VRs("site-a")[0].Wants != ramen.Primary {
		t.Fatalf("the cut-off site heard the hub: tail %v, stops %d, wants %s", app.Tail, stops, app.VRs("site-a")[0].Wants)
	}

	b.cut["site-a"] = false
	b.journal = nil
	b.clients["site-a"].resyncReady = []bool{true}
	b.until(never, time.Minute)
	if app.Tail != nil || stops != 1 {
		t.Errorf("the hub reached site-a: tail %v, stops %d; want it deleted once", app.Tail, stops)
	}
	if !slices.Contains(b.events, "site-a the hub deletes wp's pod on site-a") {
		t.Errorf("events %v: the tail's deletion is not on the timeline", b.events)
	}
	vr := app.VRs("site-a")[0]
	if vr.Wants != ramen.Secondary || !vr.AutoResync || !vr.Done() ||
		!slices.Equal(b.callsOn("site-a")[:3], []string{"demote", "demote", "resync(force)"}) {
		t.Errorf("site-a: wants %s autoResync %v done %v after calls %v", vr.Wants, vr.AutoResync, vr.Done(), b.callsOn("site-a"))
	}
}

// never holds: until runs for its whole limit.
func never() bool { return false }

func TestATailThatDoesNotStopIsAViolation(t *testing.T) {
	b := newScriptedBed()
	app := b.driver.Add("wp", []string{"db"})
	tail := &ramen.Tail{Site: "site-a", Stop: func() error { return errors.New("unstage db on site-a: busy") }}
	if err := b.driver.Failover(app, "site-a", "site-b", tail); err != nil {
		t.Fatal(err)
	}
	if app.Tail != nil || len(b.violations) != 1 || !strings.Contains(b.violations[0], "busy") {
		t.Errorf("tail %v, violations %v", app.Tail, b.violations)
	}
}

func TestARoundCallsOnlyTheVRsDue(t *testing.T) {
	b := newScriptedBed()
	b.driver.TellWishes = true
	app := b.driver.Add("wp", []string{"db"})
	if err := b.driver.Protect(app, "site-a"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(b.events, "site-a wp's VolumeReplication db wants primary (autoResync false)") {
		t.Errorf("events %v: TellWishes puts the wish on the timeline", b.events)
	}
	due := app.VRs("site-a")[0].Due
	b.journal = nil
	for ; b.now.Before(due); b.now = b.now.Add(time.Second) {
		b.round()
	}
	if len(b.journal) != 0 {
		t.Errorf("calls %v before the VR was due", b.journal)
	}
	b.round()
	if !slices.Equal(b.journal, []string{"site-a info"}) {
		t.Errorf("calls %v once due, want one info", b.journal)
	}
}

// TestUnprotectDisablesEverySiteThatHeardAWish: after a relocation both
// sites hold VRs; deleting the protection disables replication on both,
// and on no site that never heard of the application.
func TestUnprotectDisablesEverySiteThatHeardAWish(t *testing.T) {
	b := newScriptedBed()
	app := b.driver.Add("wp", []string{"db"})
	if err := b.driver.Protect(app, "site-a"); err != nil {
		t.Fatal(err)
	}
	b.clients["site-a"].resyncReady = []bool{true}
	if err := b.driver.Relocate(app, "site-a", "site-b"); err != nil {
		t.Fatal(err)
	}
	b.journal = nil
	if err := b.driver.Unprotect(app); err != nil {
		t.Fatal(err)
	}
	if a, b := b.callsOn("site-a"), b.callsOn("site-b"); !slices.Equal(a, []string{"disable"}) || !slices.Equal(b, []string{"disable"}) {
		t.Errorf("calls on site-a %v, on site-b %v; want one disable each", a, b)
	}

	b = newScriptedBed()
	app = b.driver.Add("wp", []string{"db"})
	if err := b.driver.Protect(app, "site-a"); err != nil {
		t.Fatal(err)
	}
	b.journal = nil
	if err := b.driver.Unprotect(app); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.journal, []string{"site-a disable"}) {
		t.Errorf("calls %v, want site-a's disable only", b.journal)
	}
}

// After an unplanned fail-over Ramen relocates back only once the old
// primary is PeerReady: demoted and resynced. PeerReady waits for it while
// the application still runs where it is -- the first demote of the old
// site reaches the driver then, not after the relocation stopped the
// application -- and a site that never heard a wish is ready at once.
func TestPeerReadyWaitsUntilTheOldPrimaryIsDemotedAndResynced(t *testing.T) {
	b := newScriptedBed()
	app := b.driver.Add("wp", []string{"db"})
	if err := b.driver.PeerReady(app, "site-b"); err != nil || len(b.journal) != 0 {
		t.Fatalf("a site that heard no wish: %v after calls %v, want ready at once", err, b.journal)
	}
	if err := b.driver.Protect(app, "site-a"); err != nil {
		t.Fatal(err)
	}
	b.cut["site-a"] = true
	if err := b.driver.Failover(app, "site-a", "site-b", nil); err != nil {
		t.Fatal(err)
	}
	b.cut["site-a"] = false
	b.journal = nil
	b.clients["site-a"].resyncReady = []bool{false, true}
	if err := b.driver.PeerReady(app, "site-a"); err != nil {
		t.Fatal(err)
	}
	if got := b.callsOn("site-a"); !slices.Equal(got, []string{"demote", "demote", "resync(force)", "demote", "resync(force)"}) {
		t.Errorf("site-a calls %v: want demote, then demote and resync until ready", got)
	}
	if calls := len(b.journal); b.driver.PeerReady(app, "site-a") != nil || len(b.journal) != calls {
		t.Error("a ready peer is waited for again")
	}
}
