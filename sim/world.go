package sim

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"time"
)

// World is one simulated run: a seed, a clock, a queue of events, named random
// streams and an event log whose hash identifies the run.
type World struct {
	seed     uint64
	epoch    time.Time
	scenario string
	config   config // as given, for Describe

	now         time.Duration // simulated time since the epoch
	queue       eventQueue
	nextSeq     uint64
	eventsRun   uint64
	eventBudget uint64
	running     string // label of the event whose callback is executing; "" between events

	streams    map[string]*rand.Rand // looked up by name, never iterated
	invariants []invariant

	log      hash.Hash // SHA-256 of every event-log line
	line     []byte    // reused buffer for the line being written
	trace    io.Writer
	traceErr error
}

// NewWorld creates a world at the epoch with an empty queue. Its first log line
// records the seed and the epoch, so the hash of a run names both.
func NewWorld(seed uint64, options ...Option) *World {
	c := defaultConfig()
	for _, option := range options {
		option(&c)
	}
	w := &World{
		seed:        seed,
		epoch:       c.epoch,
		scenario:    c.scenario,
		config:      c,
		eventBudget: c.eventBudget,
		streams:     map[string]*rand.Rand{},
		log:         sha256.New(),
		trace:       c.trace,
	}
	w.Logf("world", "seed=%d epoch=%s", seed, c.epoch.Format(time.RFC3339Nano))
	return w
}

// Now is the simulated time. It satisfies storage/backend.Clock.
func (w *World) Now() time.Time { return w.epoch.Add(w.now) }

// Elapsed is the simulated time since the epoch.
func (w *World) Elapsed() time.Duration { return w.now }

// Seed is the seed the World was created with.
func (w *World) Seed() uint64 { return w.seed }

// Pending is the number of events scheduled and not yet run or cancelled.
func (w *World) Pending() int { return len(w.queue) }

// EventsRun is the number of events run so far, the measure of the event budget.
func (w *World) EventsRun() uint64 { return w.eventsRun }

// Describe lists the seed and every knob, one "name=value" per line, for a run
// to print before it starts (as TigerBeetle's VOPR does), so that a failing run's
// output says everything needed to replay it.
func (w *World) Describe() string {
	scenario := w.scenario
	if scenario == "" {
		scenario = "(unnamed)"
	}
	return fmt.Sprintf("seed=%d\nscenario=%s\n%shash=sha256\nreplay=%s\n",
		w.seed, scenario, w.config, w.replayCommand())
}

func (w *World) replayCommand() string {
	scenario := w.scenario
	if scenario == "" {
		scenario = "<scenario>"
	}
	return ReplayCommand(scenario, w.seed)
}
