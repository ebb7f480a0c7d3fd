package sim

import (
	"fmt"
	"io"
	"time"
)

// DefaultEventBudget bounds the events one World may run unless WithEventBudget
// says otherwise: meant to sit well above what a planned scenario needs, and low
// enough that a livelock (an event that reschedules itself without time moving)
// fails in a few seconds (the scheduler runs about three million events a
// second) instead of hanging CI. A long chaos run raises it.
const DefaultEventBudget = 10_000_000

// DefaultEpoch is where simulated time starts: 2026-01-01T00:00:00Z. A fixed
// epoch keeps timestamps (snapshot names, lastSyncTime) identical across replays.
func DefaultEpoch() time.Time { return time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC) }

// Option configures a World. Every option is a knob that Describe prints.
type Option func(*config)

type config struct {
	epoch       time.Time
	eventBudget uint64
	trace       io.Writer
	scenario    string
}

func defaultConfig() config {
	return config{epoch: DefaultEpoch(), eventBudget: DefaultEventBudget}
}

// WithTrace writes every event-log line to trace as it is hashed.
func WithTrace(trace io.Writer) Option {
	if trace == nil {
		panic("sim: WithTrace(nil)")
	}
	return func(c *config) { c.trace = trace }
}

// WithEventBudget sets how many events the World may run in its life before it
// panics with a *Failure. The budget must be positive.
func WithEventBudget(events uint64) Option {
	if events == 0 {
		panic("sim: WithEventBudget(0) would forbid every event")
	}
	return func(c *config) { c.eventBudget = events }
}

// WithEpoch moves the instant simulated time starts from.
func WithEpoch(epoch time.Time) Option {
	if epoch.IsZero() {
		panic("sim: WithEpoch(zero time)")
	}
	return func(c *config) { c.epoch = epoch }
}

// WithScenario names the scenario the World runs, so that a *Failure prints the
// exact command that replays it (see ReplayCommand).
func WithScenario(name string) Option {
	if name == "" {
		panic("sim: WithScenario(\"\")")
	}
	return func(c *config) { c.scenario = name }
}

func (c config) String() string {
	trace := "off"
	if c.trace != nil {
		trace = fmt.Sprintf("%T", c.trace)
	}
	return fmt.Sprintf("epoch=%s\nevent-budget=%d\ntrace=%s\n",
		c.epoch.Format(time.RFC3339Nano), c.eventBudget, trace)
}
