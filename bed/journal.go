package bed

import (
	"slices"
	"time"

	"github.com/baton-dr/baton/reports"
)

// WindowEvents is how many events before a violation its report shows.
const WindowEvents = 20

// Journal is what a bed saw: its timeline, and the invariants broken, each
// with the events that led to it. Every bed keeps one; each says itself how
// it logs an event and what time it is. It is not safe for concurrent use.
type Journal struct {
	timeline   []reports.Event
	violations []reports.Violation
	reported   map[string]bool
}

// Record adds events to the timeline.
func (j *Journal) Record(events ...reports.Event) { j.timeline = append(j.timeline, events...) }

// Violate records, at at, the broken invariant with the WindowEvents events
// before it. The bed then records the violation's own event, as it logs.
func (j *Journal) Violate(at time.Time, invariant, message string) {
	window := j.timeline[max(0, len(j.timeline)-WindowEvents):]
	j.violations = append(j.violations, reports.Violation{Invariant: invariant, Message: message, At: at,
		Window: slices.Clone(window)})
}

// FirstReport tells whether key (a problem a bed's checks find again at
// every look) is reported now for the first time, and remembers it.
func (j *Journal) FirstReport(key string) bool {
	if j.reported[key] {
		return false
	}
	if j.reported == nil {
		j.reported = map[string]bool{}
	}
	j.reported[key] = true
	return true
}

// Violations are the invariants broken so far.
func (j *Journal) Violations() []reports.Violation { return slices.Clone(j.violations) }

// Timeline is what happened so far.
func (j *Journal) Timeline() []reports.Event { return slices.Clone(j.timeline) }
