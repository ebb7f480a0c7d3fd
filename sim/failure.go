package sim

import (
	"fmt"
	"time"
)

// Failure is what the World panics with when a run breaks in a way only a replay
// can explain: the event budget ran out, or an invariant (AddInvariant) failed.
// The bed recovers it and reports Replay.
type Failure struct {
	Seed   uint64
	At     time.Duration // simulated time since the epoch
	Event  string        // label of the event that ran (or was about to)
	Reason string
	Replay string // the command that replays the run
	Err    error  // the invariant's error, if an invariant failed
}

func (f *Failure) Error() string {
	return fmt.Sprintf("sim: %s at +%s in event %q (seed %d); replay: %s",
		f.Reason, f.At, f.Event, f.Seed, f.Replay)
}

// Unwrap exposes the invariant's error.
func (f *Failure) Unwrap() error { return f.Err }

// ReplayCommand is the command line that replays a scenario with a seed.
func ReplayCommand(scenario string, seed uint64) string {
	return fmt.Sprintf("batonctl sim run --scenario %s --seed %d", scenario, seed)
}

func (w *World) failure(event, reason string, err error) *Failure {
	return &Failure{Seed: w.seed, At: w.now, Event: event, Reason: reason, Replay: w.replayCommand(), Err: err}
}
