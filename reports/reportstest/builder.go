package reportstest

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/baton-dr/baton/reports"
)

// Sites and lanes of the sample bed.
const (
	siteA = "site-a"
	siteB = "site-b"
	hub   = "hub"
)

// simEpoch is where simulated time starts in every sample result.
var simEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// builder accumulates one result's story in simulated time. Its clock only
// moves forward; every helper appends events at the current instant.
type builder struct {
	rng    *rand.Rand
	now    time.Time
	result reports.Result
	// written are the bytes the workload wrote per volume since that
	// volume's last sync, the next sync's BytesChanged.
	written map[string]uint64
	// writesSinceSync count the acknowledged writes behind written, the
	// writes a fail-over would lose.
	writesSinceSync map[string]int
	// firstUnsynced is when the oldest write not yet shipped was
	// acknowledged, per volume: a fail-over now loses writes that old.
	firstUnsynced map[string]time.Time
	lastSync      map[string]time.Time
	nextSnapshot  map[string]int
}

func newBuilder(scenario string, seed uint64) *builder {
	b := &builder{
		rng:             rand.New(rand.NewPCG(seed, nameHash(scenario))),
		now:             simEpoch,
		written:         map[string]uint64{},
		writesSinceSync: map[string]int{},
		firstUnsynced:   map[string]time.Time{},
		lastSync:        map[string]time.Time{},
		nextSnapshot:    map[string]int{},
	}
	b.result = reports.Result{
		Scenario:     scenario,
		Seed:         seed,
		Verdict:      reports.Passed,
		Replay:       fmt.Sprintf("batonctl scenario run %s --bed sim --seed %d", scenario, seed),
		EventLogHash: fmt.Sprintf("%016x", b.rng.Uint64()),
		Started:      simEpoch,
	}
	return b
}

// nameHash folds a scenario name into the second PCG word, so that two
// scenarios on the same seed tell different stories.
func nameHash(name string) uint64 {
	hash := fnv.New64a()
	_, _ = hash.Write([]byte(name))
	return hash.Sum64()
}

// advance moves the clock by about d (±10%, seeded), never backwards, in
// whole milliseconds as the simulation's ticks are.
func (b *builder) advance(d time.Duration) {
	jitter := time.Duration(b.rng.Int64N(int64(d)/5+1)) - d/10
	b.now = b.now.Add((d + jitter).Round(time.Millisecond))
}

func (b *builder) event(site string, kind reports.EventKind, detail string) {
	b.result.Timeline = append(b.result.Timeline, reports.Event{At: b.now, Site: site, Kind: kind, Detail: detail})
}

func (b *builder) begin(site string, kind reports.EventKind, span, detail string) {
	b.result.Timeline = append(b.result.Timeline, reports.Event{At: b.now, Site: site, Kind: kind,
		Detail: detail, Span: span, Edge: reports.EdgeBegin})
}

func (b *builder) end(site string, kind reports.EventKind, span, detail string) {
	b.result.Timeline = append(b.result.Timeline, reports.Event{At: b.now, Site: site, Kind: kind,
		Detail: detail, Span: span, Edge: reports.EdgeEnd})
}

// phase runs body as one named phase of the scenario.
func (b *builder) phase(name string, body func() (ok bool, note string)) {
	start := b.now
	ok, note := body()
	if !b.now.After(start) {
		b.advance(time.Second)
	}
	b.result.Phases = append(b.result.Phases, reports.Phase{Name: name, Start: start, End: b.now, OK: ok, Note: note})
}

// writes lets the workload write on site for about d, in two-second batches.
func (b *builder) writes(site string, volumes []string, d time.Duration) {
	end := b.now.Add(d)
	for batch := 0; b.now.Before(end) && batch < 10_000; batch++ {
		for _, volume := range volumes {
			count := 40 + b.rng.IntN(400)
			bytes := uint64(count) * 4096 * uint64(1+b.rng.IntN(4))
			if b.writesSinceSync[volume] == 0 {
				b.firstUnsynced[volume] = b.now
			}
			b.written[volume] += bytes
			b.writesSinceSync[volume] += count
			b.event(site, reports.EventWrite, fmt.Sprintf("%s: %d writes acknowledged, %d KiB", volume, count, bytes>>10))
		}
		b.advance(2 * time.Second)
	}
}

// sync ships the snapshot of every volume from one site to the other.
func (b *builder) sync(from, to string, volumes []string, failback bool) {
	for _, volume := range volumes {
		changed := b.written[volume]
		// An incremental stream carries the changed blocks plus its
		// headers and the snapshot's metadata: a few percent.
		shipped := changed + changed/50 + 64<<10
		b.recordSync(volume, from, to, changed, shipped, failback)
	}
}

func (b *builder) recordSync(volume, from, to string, changed, shipped uint64, failback bool) {
	b.nextSnapshot[volume]++
	snapshot := b.nextSnapshot[volume]
	b.result.Syncs = append(b.result.Syncs, reports.Sync{Volume: volume, From: from, To: to, At: b.now,
		BytesShipped: shipped, BytesChanged: changed, Failback: failback})
	what := "snapshot"
	if failback {
		what = "fail-back delta"
	}
	b.event(to, reports.EventSync, fmt.Sprintf("%s: received %s S%d from %s, %d KiB shipped for %d KiB changed",
		volume, what, snapshot, from, shipped>>10, changed>>10))
	b.forgetUnsynced(volume)
	b.lastSync[volume] = b.now
	b.advance(300 * time.Millisecond)
}

// forgetUnsynced drops the count of a volume's writes since its last sync:
// they shipped, or they are lost to a fail-over.
func (b *builder) forgetUnsynced(volume string) {
	b.written[volume] = 0
	b.writesSinceSync[volume] = 0
	delete(b.firstUnsynced, volume)
}

// result returns the finished result, its timeline in time order.
func (b *builder) finish() reports.Result {
	b.result.Duration = b.now.Sub(b.result.Started)
	slices.SortStableFunc(b.result.Timeline, func(x, y reports.Event) int { return x.At.Compare(y.At) })
	return b.result
}

// violate records a broken invariant with the events leading up to it.
func (b *builder) violate(invariant, message string, windowEvents int) {
	b.event("", reports.EventViolation, invariant+": "+message)
	timeline := b.result.Timeline
	window := slices.Clone(timeline[max(0, len(timeline)-windowEvents):])
	b.result.Violations = append(b.result.Violations, reports.Violation{Invariant: invariant, Message: message,
		At: b.now, Window: window})
	b.result.Verdict = reports.Failed
}
