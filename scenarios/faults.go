package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/baton-dr/baton/bed"
)

// A chaos run injects its faults at chaos points: the start of every phase
// (a boundary) and, in the hub's stories, a moment after a step (a hub cut).
// With --chaos the seed draws each point's fault; with a schedule (a
// Schedule, --faults) the run takes its faults from the schedule instead
// and draws nothing. A run records the faults it injected either way, so a
// drawn schedule can be replayed, shrunk (sweep.Shrink) and written down.

// FaultKind names a fault class (FaultClasses describes each).
type FaultKind string

// The fault classes, as a schedule names them.
const (
	FaultPartition     FaultKind = "partition"
	FaultDegradedLink  FaultKind = "degraded-link"
	FaultOperatorCrash FaultKind = "operator-crash"
	FaultNodeCrash     FaultKind = "node-crash"
	FaultDiskFull      FaultKind = "disk-full"
	FaultAPIErrors     FaultKind = "api-errors"
	FaultStoreFaults   FaultKind = "store-faults"
)

// Span is a duration written as Go writes one ("1m30s"), exactly: a
// schedule read back replays the nanoseconds it was drawn with.
type Span time.Duration

// MarshalText writes the span as time.Duration.String does.
func (s Span) MarshalText() ([]byte, error) { return []byte(time.Duration(s).String()), nil }

// UnmarshalText reads a span time.ParseDuration accepts.
func (s *Span) UnmarshalText(text []byte) error {
	d, err := time.ParseDuration(string(text))
	if err != nil {
		return err
	}
	*s = Span(d)
	return nil
}

// Fault is one fault of a schedule: where it happens, what it does to what,
// and for how long. The run then waits Duration and undoes it.
type Fault struct {
	// At is the chaos point, counted from 0 in the order the run reaches
	// them; Phase names it for a reader (At alone decides).
	At    int       `json:"at"`
	Phase string    `json:"phase,omitempty"`
	Kind  FaultKind `json:"kind"`
	// Target is what the fault hits: an endpoint ("hub" or a site) for a
	// partition and API errors, a site for the others. Peer is a
	// partition's other end; Node a node fault's node.
	Target   string `json:"target"`
	Peer     string `json:"peer,omitempty"`
	Node     string `json:"node,omitempty"`
	BothWays bool   `json:"both_ways,omitempty"`
	// Delay is how long after its point the fault starts.
	Delay    Span `json:"delay,omitempty"`
	Duration Span `json:"duration"`
	// Rate is the share of calls or writes that fail (API and store faults).
	Rate float64          `json:"rate,omitempty"`
	Link *LinkDegradation `json:"link,omitempty"`
}

// LinkDegradation is a degraded link's bed.Degradation, as a schedule
// writes it.
type LinkDegradation struct {
	ExtraLatency            Span    `json:"extra_latency"`
	BandwidthBytesPerSecond uint64  `json:"bandwidth_bytes_per_second"`
	Loss                    float64 `json:"loss"`
	Duplicate               float64 `json:"duplicate"`
	Reorder                 float64 `json:"reorder"`
}

// String is the fault on one line.
func (f Fault) String() string {
	what := f.Target
	switch {
	case f.Kind == FaultPartition && f.BothWays:
		what = f.Target + "<->" + f.Peer
	case f.Kind == FaultPartition:
		what = f.Target + "->" + f.Peer
	case f.Kind == FaultDegradedLink:
		what = f.Target + "<->" + f.Peer
	case f.Node != "":
		what = f.Target + "/" + f.Node
	}
	line := fmt.Sprintf("point %d (%s): %s %s for %s", f.At, f.Phase, f.Kind, what, time.Duration(f.Duration))
	if f.Delay > 0 {
		line += fmt.Sprintf(" after %s", time.Duration(f.Delay))
	}
	if f.Rate > 0 {
		line += fmt.Sprintf(", %.0f%% failing", f.Rate*100)
	}
	return line
}

// Schedule is the faults of one run, in the order they happen: what
// --faults reads and a shrink writes.
type Schedule struct {
	Scenario string  `json:"scenario"`
	Seed     uint64  `json:"seed"`
	Faults   []Fault `json:"faults"`
}

// Kinds are the fault classes the schedule uses, each once.
func (sch Schedule) Kinds() []FaultKind {
	var kinds []FaultKind
	seen := map[FaultKind]bool{}
	for _, f := range sch.Faults {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			kinds = append(kinds, f.Kind)
		}
	}
	return kinds
}

// ReadSchedule reads a schedule file and checks every fault names a class.
func ReadSchedule(path string) (Schedule, error) {
	var sch Schedule
	data, err := os.ReadFile(path)
	if err != nil {
		return sch, err
	}
	if err := json.Unmarshal(data, &sch); err != nil {
		return sch, fmt.Errorf("the fault schedule %s: %w", path, err)
	}
	for i, f := range sch.Faults {
		if err := f.check(); err != nil {
			return sch, fmt.Errorf("the fault schedule %s: fault %d: %w", path, i, err)
		}
	}
	return sch, nil
}

// check says what a fault read from a file lacks for its kind.
func (f Fault) check() error {
	if _, known := faultCapability[f.Kind]; !known {
		return fmt.Errorf("the kind %q, want one of %v", f.Kind, faultKinds())
	}
	switch {
	case f.At < 0 || f.Duration < 0 || f.Delay < 0:
		return fmt.Errorf("a negative point or span")
	case f.Target == "":
		return fmt.Errorf("%s without a target", f.Kind)
	case f.Kind == FaultPartition && (f.Peer == "" || f.Peer == f.Target):
		return fmt.Errorf("a partition of %s from %q", f.Target, f.Peer)
	case f.Kind == FaultDegradedLink && f.Link == nil:
		return fmt.Errorf("a degraded link without its link")
	case (f.Kind == FaultNodeCrash || f.Kind == FaultDiskFull) && f.Node == "":
		return fmt.Errorf("%s of %s without a node", f.Kind, f.Target)
	case (f.Kind == FaultAPIErrors || f.Kind == FaultStoreFaults) && (f.Rate <= 0 || f.Rate > 1):
		return fmt.Errorf("%s at the rate %v, want (0, 1]", f.Kind, f.Rate)
	}
	return nil
}

// WriteSchedule writes the schedule as ReadSchedule reads it.
func WriteSchedule(path string, sch Schedule) error {
	data, err := json.MarshalIndent(sch, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// faultCapability asks whether a bed can make a fault class, as bed.Can
// asks it when the fault is injected.
var faultCapability = map[FaultKind]func(bed.Bed) error{
	FaultPartition: func(bed.Bed) error { return nil }, // every bed partitions
	FaultDegradedLink: func(b bed.Bed) error {
		_, err := bed.Can[bed.LinkDegrader](b, "chaos: a degraded link")
		return err
	},
	FaultOperatorCrash: func(b bed.Bed) error {
		_, err := bed.Can[bed.ControllerCrasher](b, "chaos: an operator crash")
		return err
	},
	FaultNodeCrash: func(b bed.Bed) error {
		_, err := bed.Can[bed.NodeCrasher](b, "chaos: a node crash")
		return err
	},
	FaultDiskFull: func(b bed.Bed) error {
		_, err := bed.Can[bed.PoolFiller](b, "chaos: a full pool")
		return err
	},
	FaultAPIErrors: func(b bed.Bed) error {
		_, err := bed.Can[bed.APIFailer](b, "chaos: API errors")
		return err
	},
	FaultStoreFaults: func(b bed.Bed) error {
		_, err := bed.Can[bed.StoreFailer](b, "chaos: store faults")
		return err
	},
}

func faultKinds() []FaultKind {
	return []FaultKind{FaultPartition, FaultDegradedLink, FaultOperatorCrash, FaultNodeCrash,
		FaultDiskFull, FaultAPIErrors, FaultStoreFaults}
}

// CanMake says, before a run, whether the bed can make every fault of the
// schedule: the first class it lacks, with why.
func CanMake(b bed.Bed, sch Schedule) error {
	for _, kind := range sch.Kinds() {
		if err := faultCapability[kind](b); err != nil {
			return fmt.Errorf("the fault schedule needs %s: %w", kind, err)
		}
	}
	return nil
}
