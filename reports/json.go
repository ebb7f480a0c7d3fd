package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// JSONSchema names the layout of results.json; it changes when a field is
// renamed or removed, or its meaning changes (added fields keep it). v2:
// rpo_ms is measured from the failure, not the read-back (the old figure is
// loss_age_ms); rto_ms from the failure, not the fail-over's start;
// lost_before_cut_ms is gone (rpo_ms now says it).
const JSONSchema = "baton.results/v2"

// JSONFile is results.json: what tools read of a run. Field names are stable
// within a JSONSchema. Conventions: times inside a result are offsets in
// milliseconds from the result's start ("*_ms", fractions allowed); absolute
// times are RFC 3339 in UTC; sizes are bytes; lists are never null, only
// empty; results are ordered by scenario, then seed.
type JSONFile struct {
	Schema    string         `json:"schema"`
	Run       JSONRun        `json:"run"`
	Totals    JSONTotals     `json:"totals"`
	Scenarios []JSONScenario `json:"scenarios"`
	Results   []JSONResult   `json:"results"`
	// Bugs is a seeded-bug matrix's rows (Run.Matrix); absent otherwise.
	Bugs []JSONBug `json:"bugs,omitempty"`
}

// JSONBug is one row of a seeded-bug matrix.
type JSONBug struct {
	Bug        string     `json:"bug"`
	Does       string     `json:"does"`
	Seed       string     `json:"seed"`
	Scenarios  []string   `json:"scenarios"`
	Lacking    []string   `json:"lacking"`
	Verdict    BugVerdict `json:"verdict"` // caught, missed, errored, not run
	Runs       int        `json:"runs"`
	CaughtRuns int        `json:"caught_runs"`
	// CaughtBy is the first run that caught it; absent unless caught.
	CaughtBy *JSONCatch `json:"caught_by,omitempty"`
	// Results are the runs with the bug on, without their timelines (each
	// replays from its command).
	Results []JSONResult `json:"results"`
}

// JSONCatch is how a run caught its bug.
type JSONCatch struct {
	Scenario string  `json:"scenario"`
	Seed     uint64  `json:"seed"`
	Check    string  `json:"check"` // the invariant or check that failed
	Message  string  `json:"message"`
	AfterMs  float64 `json:"after_ms"` // from the run's start
	Replay   string  `json:"replay"`
}

// JSONRun describes the run as a whole.
type JSONRun struct {
	Name       string  `json:"name"`
	Bed        string  `json:"bed"`
	Commit     string  `json:"commit"`
	Started    string  `json:"started"` // wall clock, RFC 3339
	DurationMs float64 `json:"duration_ms"`
}

// JSONTotals counts verdicts over the whole run.
type JSONTotals struct {
	Results int `json:"results"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
}

// JSONScenario sums up one scenario over its seeds.
type JSONScenario struct {
	Scenario     string   `json:"scenario"`
	Results      int      `json:"results"`
	Passed       int      `json:"passed"`
	Failed       int      `json:"failed"`
	Errored      int      `json:"errored"`
	FailingSeeds []uint64 `json:"failing_seeds"` // failed and errored
	RPOMaxMs     float64  `json:"rpo_max_ms"`    // worst fail-over of any seed
	RTOMaxMs     float64  `json:"rto_max_ms"`    // slowest fail-over of any seed
	// PlannedLostWrites are writes lost by planned relocations: must be 0.
	PlannedLostWrites int    `json:"planned_lost_writes"`
	BytesShipped      uint64 `json:"bytes_shipped"`
	BytesChanged      uint64 `json:"bytes_changed"`
	Violations        int    `json:"violations"`
}

// JSONResult is one scenario on one seed.
type JSONResult struct {
	Scenario     string  `json:"scenario"`
	Seed         uint64  `json:"seed"`
	Verdict      Verdict `json:"verdict"` // passed, failed, errored
	Replay       string  `json:"replay"`  // the command that replays it exactly
	EventLogHash string  `json:"event_log_hash"`
	Started      string  `json:"started"` // simulated (or wall) clock, RFC 3339
	DurationMs   float64 `json:"duration_ms"`
	Error        string  `json:"error,omitempty"` // why the bed errored
	// HeldBesideMs is how long the run's waits were held up by the faults
	// of runs beside it on the same sites (Result.HeldBeside).
	HeldBesideMs float64        `json:"held_beside_ms,omitempty"`
	Phases       []JSONPhase    `json:"phases"`
	Failovers    []JSONFailover `json:"failovers"`
	RPOMaxMs     float64        `json:"rpo_max_ms"`
	RTOMaxMs     float64        `json:"rto_max_ms"`
	// TailKept is how many acknowledged writes of old primaries, after the
	// cut, the kept tails read back after fail-backs held (KeptTails).
	TailKept     int             `json:"tail_kept"`
	KeptTails    []JSONKeptTail  `json:"kept_tails"`
	Syncs        []JSONSync      `json:"syncs"`
	BytesShipped uint64          `json:"bytes_shipped"` // sum over syncs
	BytesChanged uint64          `json:"bytes_changed"` // sum over syncs
	Chains       []JSONChain     `json:"chains"`
	Violations   []JSONViolation `json:"violations"`
	// Bugs are the seeded bugs switched on for the run; absent for none.
	Bugs []string `json:"bugs,omitempty"`
	// Events is the whole timeline, for failed and errored results only:
	// a passed result replays from its seed, and a sweep of thousands
	// would otherwise carry millions of events nobody reads.
	Events []JSONEvent `json:"events,omitempty"`
}

// JSONPhase is one step of the scenario.
type JSONPhase struct {
	Name       string  `json:"name"`
	StartMs    float64 `json:"start_ms"`
	DurationMs float64 `json:"duration_ms"`
	OK         bool    `json:"ok"`
	Note       string  `json:"note,omitempty"`
}

// JSONFailover is one fail-over (planned: a relocation) of one volume.
type JSONFailover struct {
	App        string  `json:"app"`
	Volume     string  `json:"volume"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	Planned    bool    `json:"planned"`
	AtMs       float64 `json:"at_ms"`
	LostWrites int     `json:"lost_writes"`
	// RPOMs, RTOMs, LossAgeMs and RPOBoundMs: see Failover.
	RPOMs      float64 `json:"rpo_ms"`
	RTOMs      float64 `json:"rto_ms"`
	LossAgeMs  float64 `json:"loss_age_ms"`
	RPOBoundMs float64 `json:"rpo_bound_ms,omitempty"`
}

// JSONKeptTail is one volume's diverged tail read back after a fail-back
// (KeptTail): lost and corrupt writes are in neither the new chain nor it.
type JSONKeptTail struct {
	App          string  `json:"app"`
	Volume       string  `json:"volume"`
	Site         string  `json:"site"`
	Member       string  `json:"member"`
	FailedOverMs float64 `json:"failed_over_ms"`
	CheckedMs    float64 `json:"checked_ms"`
	Acknowledged int     `json:"acknowledged"`
	Held         int     `json:"held"`
	Lost         int     `json:"lost"`
	Corrupt      int     `json:"corrupt"`
}

// JSONSync is one snapshot shipped between sites.
type JSONSync struct {
	Volume       string  `json:"volume"`
	From         string  `json:"from"`
	To           string  `json:"to"`
	AtMs         float64 `json:"at_ms"`
	BytesShipped uint64  `json:"bytes_shipped"`
	Receivers    int     `json:"receivers"`
	BytesChanged uint64  `json:"bytes_changed"`
	Failback     bool    `json:"failback"`
}

// JSONChain is one volume's replication chain at the end of the run.
type JSONChain struct {
	Handle  string       `json:"handle"`
	Length  int          `json:"length"`
	Members []JSONMember `json:"members"` // root first
}

// JSONMember is one hop of a chain.
type JSONMember struct {
	Site       string `json:"site"`
	Ref        string `json:"ref"`
	Generation uint32 `json:"generation"`
	State      string `json:"state"`
	// LastSyncMs is absent when the member never synced.
	LastSyncMs *float64 `json:"last_sync_ms,omitempty"`
}

// JSONViolation is a broken invariant and the events that show it.
type JSONViolation struct {
	Invariant string      `json:"invariant"`
	Message   string      `json:"message"`
	AtMs      float64     `json:"at_ms"`
	Window    []JSONEvent `json:"window"`
}

// JSONEvent is one timeline event.
type JSONEvent struct {
	AtMs   float64   `json:"at_ms"`
	Site   string    `json:"site"` // "" for the world
	Kind   EventKind `json:"kind"`
	Detail string    `json:"detail"`
	Span   string    `json:"span,omitempty"`
	Edge   Edge      `json:"edge,omitempty"`
}

// WriteJSON writes results.json for run: indented, results ordered by
// scenario then seed, so the same run always gives the same bytes.
func WriteJSON(w io.Writer, run Run) error {
	encoder := json.NewEncoder(w)
	encoder.SetIndent("", "  ")
	// results.json is read by tools and people, never embedded in HTML:
	// keep "->" and "<" readable.
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(NewJSONFile(run)); err != nil {
		return fmt.Errorf("failed to write results.json: %w", err)
	}
	return nil
}

// NewJSONFile converts a run into the results.json layout.
func NewJSONFile(run Run) JSONFile {
	sorted := sortedResults(run.Results)
	counted := countVerdicts(sorted)
	file := JSONFile{
		Schema: JSONSchema,
		Run: JSONRun{Name: run.Name, Bed: run.Bed, Commit: run.Commit, Started: timestamp(run.Started),
			DurationMs: milliseconds(run.Duration)},
		Totals:    JSONTotals(counted),
		Scenarios: []JSONScenario{},
		Results:   make([]JSONResult, 0, len(sorted)),
	}
	for _, summary := range summarize(sorted) {
		file.Scenarios = append(file.Scenarios, JSONScenario{Scenario: summary.Scenario, Results: summary.Results,
			Passed: summary.Passed, Failed: summary.Failed, Errored: summary.Errored,
			FailingSeeds: nonNil(summary.FailingSeeds), RPOMaxMs: milliseconds(summary.WorstRPO),
			RTOMaxMs: milliseconds(summary.WorstRTO), PlannedLostWrites: summary.LostWrites, BytesShipped: summary.ShippedBytes,
			BytesChanged: summary.ChangedBytes, Violations: summary.ViolationsAll})
	}
	for _, result := range sorted {
		file.Results = append(file.Results, jsonResult(result))
	}
	for _, row := range run.Matrix {
		file.Bugs = append(file.Bugs, jsonBug(row))
	}
	return file
}

func jsonBug(row BugRow) JSONBug {
	out := JSONBug{Bug: row.Bug, Does: row.Does, Seed: row.Seed, Scenarios: nonNil(row.Scenarios), Lacking: nonNil(row.Lacking),
		Verdict: row.Verdict(), Runs: len(row.Runs), CaughtRuns: row.CaughtRuns(), Results: []JSONResult{}}
	if r, ok := row.CaughtBy(); ok {
		check, message, after := r.Catch()
		out.CaughtBy = &JSONCatch{Scenario: r.Scenario, Seed: r.Seed, Check: check, Message: message,
			AfterMs: milliseconds(after), Replay: r.Replay}
	}
	for _, r := range sortedResults(row.Runs) {
		result := jsonResult(r)
		result.Events = nil
		out.Results = append(out.Results, result)
	}
	return out
}

func jsonResult(result Result) JSONResult {
	shipped, changed := syncTotals(result)
	out := JSONResult{Scenario: result.Scenario, Seed: result.Seed, Verdict: result.Verdict, Replay: result.Replay,
		EventLogHash: result.EventLogHash, Started: timestamp(result.Started), DurationMs: milliseconds(result.Duration),
		Error: result.Error, HeldBesideMs: milliseconds(result.HeldBeside), RPOMaxMs: milliseconds(worstRPO(result)),
		RTOMaxMs: milliseconds(worstRTO(result)), BytesShipped: shipped, BytesChanged: changed,
		Phases: []JSONPhase{}, Failovers: []JSONFailover{}, KeptTails: []JSONKeptTail{}, Syncs: []JSONSync{}, Chains: []JSONChain{},
		Violations: []JSONViolation{}, Bugs: result.Bugs}
	for _, phase := range result.Phases {
		out.Phases = append(out.Phases, JSONPhase{Name: phase.Name, StartMs: milliseconds(offset(result, phase.Start)),
			DurationMs: milliseconds(phase.End.Sub(phase.Start)), OK: phase.OK, Note: phase.Note})
	}
	for _, f := range result.Failovers {
		out.Failovers = append(out.Failovers, JSONFailover{App: f.App, Volume: f.Volume, From: f.From, To: f.To,
			Planned: f.Planned, AtMs: milliseconds(offset(result, f.At)), LostWrites: f.LostWrites,
			RPOMs: milliseconds(f.RPO), RTOMs: milliseconds(f.RTO), LossAgeMs: milliseconds(f.LossAge),
			RPOBoundMs: milliseconds(f.RPOBound)})
	}
	for _, k := range result.KeptTails {
		out.TailKept += k.Held
		out.KeptTails = append(out.KeptTails, JSONKeptTail{App: k.App, Volume: k.Volume, Site: k.Site, Member: k.Member,
			FailedOverMs: milliseconds(offset(result, k.FailedOver)), CheckedMs: milliseconds(offset(result, k.Checked)),
			Acknowledged: k.Acknowledged, Held: k.Held, Lost: k.Lost, Corrupt: k.Corrupt})
	}
	for _, s := range result.Syncs {
		out.Syncs = append(out.Syncs, JSONSync{Volume: s.Volume, From: s.From, To: s.To,
			AtMs: milliseconds(offset(result, s.At)), BytesShipped: s.BytesShipped, Receivers: s.Receivers, BytesChanged: s.BytesChanged,
			Failback: s.Failback})
	}
	for _, chain := range result.Chains {
		out.Chains = append(out.Chains, jsonChain(result, chain))
	}
	for _, v := range result.Violations {
		out.Violations = append(out.Violations, JSONViolation{Invariant: v.Invariant, Message: v.Message,
			AtMs: milliseconds(offset(result, v.At)), Window: jsonEvents(result, v.Window)})
	}
	if result.Verdict != Passed {
		out.Events = jsonEvents(result, result.Timeline)
	}
	return out
}

func jsonChain(result Result, chain Chain) JSONChain {
	out := JSONChain{Handle: chain.Handle, Length: len(chain.Members), Members: make([]JSONMember, 0, len(chain.Members))}
	for _, m := range chain.Members {
		member := JSONMember{Site: m.Site, Ref: m.Ref, Generation: m.Generation, State: m.State}
		if !m.LastSync.IsZero() {
			at := milliseconds(offset(result, m.LastSync))
			member.LastSyncMs = &at
		}
		out.Members = append(out.Members, member)
	}
	return out
}

func jsonEvents(result Result, events []Event) []JSONEvent {
	out := make([]JSONEvent, 0, len(events))
	for _, e := range events {
		out = append(out, JSONEvent{AtMs: milliseconds(offset(result, e.At)), Site: e.Site, Kind: e.Kind,
			Detail: e.Detail, Span: e.Span, Edge: e.Edge})
	}
	return out
}

// timestamp formats an absolute time for the reports; "" when unknown.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
