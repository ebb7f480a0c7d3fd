// Package reports turns runs into what a DR engineer reads afterwards: JUnit
// XML for CI systems, results.json for tools, and one self-contained
// report.html with a timeline per site, RPO and bytes charts, every chain
// drawn hop by hop, and the violations with the commands that replay them.
//
// The types here are the contract between the beds and scenarios that produce
// runs and the renderers that read them. A bed that has a Run calls
// WriteRunDir(dir, run), or one of WriteJUnit, WriteJSON and WriteHTML. The
// renderers are pure functions of the Run: the same Run gives the same bytes,
// whatever order its results arrived in (they are sorted by scenario, then
// seed). results.json's layout is JSONFile; what report.html draws in full
// for a sweep of thousands of seeds is described in selection.go.
package reports

import "time"

// Run is one run: a scenario sweep, a chaos run, or one scenario on one bed.
type Run struct {
	Name     string    // "sim sweep", "chaos 2026-11-30"
	Bed      string    // "sim", "local", "real"
	Commit   string    // the code's commit, when known
	Started  time.Time // wall clock of the machine that ran it
	Duration time.Duration
	Results  []Result
	// Matrix is a seeded-bug matrix (batonctl bugs matrix): a row per bug,
	// its runs with the bug on; Results are then the same stories run with
	// no bug, which must pass. Nil for every other run.
	Matrix []BugRow
}

// Verdict is a scenario's outcome.
type Verdict string

const (
	Passed Verdict = "passed"
	Failed Verdict = "failed"
	// Errored: the bed itself failed (a timeout setting it up, a crash of the
	// harness) -- no verdict on the system under test.
	Errored Verdict = "errored"
)

// Result is one scenario on one seed.
type Result struct {
	Scenario string // "wordpress/failover"
	Seed     uint64
	Verdict  Verdict
	Replay   string // the command that replays this run exactly
	// EventLogHash identifies the run (simulation only): same seed, same code,
	// same hash.
	EventLogHash string
	Started      time.Time     // simulated (or wall) time at the start
	Duration     time.Duration // simulated (or wall) duration
	Phases       []Phase
	Failovers    []Failover
	// KeptTails are the diverged tails read back after a fail-back, one
	// per volume of each unplanned move the bed checked.
	KeptTails  []KeptTail
	Syncs      []Sync
	Chains     []Chain
	Violations []Violation
	Timeline   []Event // what the timeline draws, in time order
	Error      string  // for Errored
	// HeldBeside is how long the run's waits were held up by the faults of
	// runs beside it on the same sites, not counted against their limits
	// (the real bed side by side; zero elsewhere).
	HeldBeside time.Duration
	// Bugs are the seeded bugs switched on for the run (WithBugs); empty
	// for the code as it ships.
	Bugs []string
}

// Phase is one step of a scenario ("deploy", "protect", "partition site-a",
// "failover to site-b", "resync", "relocate to site-a").
type Phase struct {
	Name  string
	Start time.Time
	End   time.Time
	OK    bool
	Note  string
}

// Failover measures one fail-over or relocation of one volume.
type Failover struct {
	App     string
	Volume  string
	From    string // site
	To      string
	Planned bool
	At      time.Time
	// LostWrites are acknowledged writes the new primary does not hold; a
	// planned relocation must lose none.
	LostWrites int
	// RPO is from the failure (the cut that triggered an unplanned move) back
	// to the recovery point the new primary holds: the oldest acknowledged
	// write it lost (workload.VolumeVerdict.RPO). Zero when nothing was lost
	// before the failure.
	RPO time.Duration
	// RTO is from the failure (an unplanned move's cut; a planned move's
	// decision) until the application served again on the new site.
	RTO time.Duration
	// LossAge is how old the oldest lost acknowledged write was when the
	// new primary's data was read back: the RPO plus the isolation, the
	// fail-over and the read-back. Zero when nothing was lost.
	LossAge time.Duration
	// RPOBound is what an unplanned move's RPO was allowed
	// (bed.RecoveryFloor). Zero for a planned move, or nothing lost.
	RPOBound time.Duration
}

// KeptTail is one volume's diverged tail, read back after the fail-back:
// the acknowledged writes the old primary made after the cut -- the
// application's own that the fail-over lost, and its tail instance's --
// counted in the snapshot the superseded member kept (workload.CheckKept).
// Lost and Corrupt writes are in neither the new chain nor the kept tail.
type KeptTail struct {
	App    string
	Volume string
	Site   string // the old primary's
	Member string // the superseded member's ref
	// FailedOver is when the unplanned move began; Checked when the tail
	// was read back.
	FailedOver   time.Time
	Checked      time.Time
	Acknowledged int
	Held         int
	Lost         int
	Corrupt      int
}

// Sync is one shipment of a snapshot between sites.
type Sync struct {
	Volume string
	From   string
	To     string
	At     time.Time
	// BytesShipped are the bytes of the stream; it crossed the link once per
	// receiving node (Receivers).
	BytesShipped uint64
	Receivers    int
	// BytesChanged are the bytes the workload wrote since the previous sync's
	// snapshot: an incremental stream should ship about that much.
	BytesChanged uint64
	Failback     bool // the first delta back to a recovered site
}

// Chain is one volume's replication chain at the end of the run.
type Chain struct {
	Handle  string
	Members []Member
}

// Member is one hop of a chain.
type Member struct {
	Site       string
	Ref        string
	Generation uint32
	State      string // Active, Demoted, Tombstone
	LastSync   time.Time
}

// Violation is a broken invariant, with the window of events that shows it.
type Violation struct {
	Invariant string // "chain: live ends", "volume: lost acknowledged write", ...
	Message   string
	At        time.Time
	Window    []Event
}

// Event is one line of a timeline.
type Event struct {
	At time.Time
	// Site is the lane the event belongs to: "site-a", "site-b", "hub", or ""
	// for the world. A partition's Site is the side that was cut off; a
	// partition with Site "" shades every lane.
	Site   string
	Kind   EventKind
	Detail string
	// Span pairs the two ends of an interval -- a partition and its heal, a
	// DR action's start and its end -- which share one Span and carry Edge
	// EdgeBegin and EdgeEnd. Empty for an instant. A Span that never ends
	// lasts to the end of the result.
	Span string
	Edge Edge
}

// Edge says which end of an interval an event is; the zero value is an
// instant.
type Edge string

const (
	EdgeNone  Edge = ""
	EdgeBegin Edge = "begin"
	EdgeEnd   Edge = "end"
)

// EventKind classes timeline events; each kind has its own mark.
type EventKind string

const (
	EventWrite     EventKind = "write"     // acknowledged writes (batched)
	EventSync      EventKind = "sync"      // a snapshot shipped
	EventPartition EventKind = "partition" // a fault started or healed
	EventRole      EventKind = "role"      // promote, demote, fence, reap
	EventAction    EventKind = "action"    // a DR action started or ended
	EventFault     EventKind = "fault"     // crashes and restarts
	EventDiskFull  EventKind = "disk-full" // a node's pool filled or freed
	EventAPIError  EventKind = "api-error" // an API starts or stops failing calls
	EventViolation EventKind = "violation"
)
