package sim

import (
	"container/heap"
	"fmt"
	"time"
)

// Timer is a scheduled event that may still be cancelled. The zero Timer is
// valid and cancels nothing.
type Timer struct {
	w *World
	e *event
}

// Cancel removes the event from the queue. It reports whether the event was
// still pending: false once it has run, been cancelled, or for the zero Timer.
func (t Timer) Cancel() bool {
	if t.e == nil || t.e.index < 0 {
		return false
	}
	e := heap.Remove(&t.w.queue, t.e.index).(*event)
	if e != t.e {
		panic(fmt.Sprintf("sim: cancelled %q but removed %q: queue index corrupt", t.e.label, e.label))
	}
	e.f = nil
	return true
}

// Pending reports whether the event has neither run nor been cancelled.
func (t Timer) Pending() bool { return t.e != nil && t.e.index >= 0 }

// After schedules f to run at Now()+d. Events due at the same instant run in
// the order they were scheduled. The label names the event in the log; a
// negative d panics (the past cannot be scheduled).
func (w *World) After(d time.Duration, label string, f func()) {
	w.schedule(d, label, f)
}

// Schedule is After with a Timer that can cancel the event.
func (w *World) Schedule(d time.Duration, label string, f func()) Timer {
	return Timer{w: w, e: w.schedule(d, label, f)}
}

func (w *World) schedule(d time.Duration, label string, f func()) *event {
	if d < 0 {
		panic(fmt.Sprintf("sim: event %q scheduled %s in the past", label, -d))
	}
	if label == "" || f == nil {
		panic("sim: an event needs a label and a function")
	}
	at := w.now + d
	if at < w.now {
		panic(fmt.Sprintf("sim: event %q at +%s overflows simulated time", label, d))
	}
	e := &event{at: at, seq: w.nextSeq, label: label, f: f}
	w.nextSeq++
	heap.Push(&w.queue, e)
	return e
}

// Step runs the earliest event and reports whether there was one.
func (w *World) Step() bool {
	w.mustNotNest("Step")
	if len(w.queue) == 0 {
		return false
	}
	w.step()
	return true
}

// RunFor runs every event due within d of Now, then sets the clock to Now+d
// (time passes even when nothing happens). It returns the events run.
func (w *World) RunFor(d time.Duration) int {
	w.mustNotNest("RunFor")
	deadline := w.deadline(d)
	events := 0
	for len(w.queue) > 0 && w.queue[0].at <= deadline {
		w.step()
		events++
	}
	w.now = deadline
	return events
}

// RunUntil runs events until cond holds or limit of simulated time has passed,
// and reports whether cond holds. cond is checked before the first event and
// after each one, so on success the clock stands at the event that made it
// true; on failure it stands at the limit.
func (w *World) RunUntil(cond func() bool, limit time.Duration) bool {
	w.mustNotNest("RunUntil")
	deadline := w.deadline(limit)
	for !cond() {
		if len(w.queue) == 0 || w.queue[0].at > deadline {
			w.now = deadline
			return cond() // a condition on Now may hold at the limit
		}
		w.step()
	}
	return true
}

// step runs the earliest event. The event budget is checked before the event
// runs, so the panic names the event that would have exceeded it.
func (w *World) step() {
	e := w.queue[0]
	if w.eventsRun >= w.eventBudget {
		panic(w.failure(e.label, fmt.Sprintf("event budget of %d events exhausted "+
			"(a livelock, or a run that needs WithEventBudget)", w.eventBudget), nil))
	}
	heap.Pop(&w.queue)
	if e.at < w.now {
		panic(fmt.Sprintf("sim: event %q due at +%s but the clock reads +%s", e.label, e.at, w.now))
	}
	w.now = e.at
	w.eventsRun++
	w.logEvent(e.label)
	f := e.f
	e.f = nil
	w.running = e.label
	f()
	w.running = ""
	w.checkInvariants(e.label)
}

func (w *World) deadline(d time.Duration) time.Duration {
	if d < 0 {
		panic(fmt.Sprintf("sim: negative run limit %s", d))
	}
	deadline := w.now + d
	if deadline < w.now {
		panic(fmt.Sprintf("sim: run limit %s overflows simulated time", d))
	}
	return deadline
}

// mustNotNest catches an event that runs the world from inside itself: the
// nested run would execute later events before the current one finished.
func (w *World) mustNotNest(method string) {
	if w.running != "" {
		panic(fmt.Sprintf("sim: %s called from inside event %q", method, w.running))
	}
}
