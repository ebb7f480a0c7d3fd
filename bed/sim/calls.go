package sim

import (
	"context"
	"time"

	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// The time synchronous calls take. The world has one goroutine: a call runs
// to its end inside the event that makes it, and the clock does not move
// meanwhile. What it would have taken -- the round trips on the simulated
// network, the whole timeout of a call that got no answer (a partition drops
// packets silently), the wait for a lock another call holds -- is counted
// instead, from the start of the pass that makes it: a controller's tick, a
// node agent's reconcile, a VolumeReplication's reconcile. The pass's next
// step is scheduled after it, and a call that took longer than its caller's
// deadline fails as it would -- after the callee acted on it.

// callClock counts the time of the running pass's calls.
type callClock struct {
	// elapsed is the time the running pass's calls took so far.
	elapsed time.Duration
	// event is the event elapsed belongs to: every event starts a pass of
	// its own unless it opens several (Timed).
	event uint64
	// record keeps every storage API call in calls (RecordCalls).
	record bool
	calls  []Call
}

// Call is one storage API call as its caller saw it.
type Call struct {
	From, To  string // endpoints: "site-b/csi-controller", "site-b/controller"
	Operation string
	At        time.Time     // when the pass made it, its waits included
	Took      time.Duration // what the caller waited for the answer
	Err       error
}

// callsRecorded bounds the calls RecordCalls keeps.
const callsRecorded = 10000

// RecordCalls keeps every storage API call from now on (up to a bound), for
// tests and benchmarks that time them: Calls returns them.
func (w *World) RecordCalls() { w.calls.record, w.calls.calls = true, nil }

// Calls are the storage API calls kept since RecordCalls, in the order they
// were made.
func (w *World) Calls() []Call { return w.calls.calls }

// Timed runs f as one pass of its own -- a caller that starts now, beside
// whatever else runs -- and returns what its calls took.
func (w *World) Timed(f func()) time.Duration {
	saved := w.clockNow()
	w.calls.elapsed = 0
	f()
	took := w.calls.elapsed
	w.calls.elapsed = saved
	return took
}

// clockNow is the running pass's elapsed time, zero at an event's start.
func (w *World) clockNow() time.Duration {
	if event := w.Sim.EventsRun(); event != w.calls.event {
		w.calls.event, w.calls.elapsed = event, 0
	}
	return w.calls.elapsed
}

// passTime is the simulated time the running pass has reached.
func (w *World) passTime() time.Time { return w.Sim.Now().Add(w.clockNow()) }

// wait adds d to the running pass.
func (w *World) wait(d time.Duration) {
	w.clockNow()
	w.calls.elapsed += d
}

func (w *World) recordCall(c Call) {
	if w.calls.record && len(w.calls.calls) < callsRecorded {
		w.calls.calls = append(w.calls.calls, c)
	}
}

// everyPass runs f as a pass at each period from now on; a pass that took
// longer than period delays the next, as a controller's loop that is still
// busy when its ticker fires.
func (w *World) everyPass(period time.Duration, label string, f func()) {
	var tick func()
	tick = func() {
		took := w.Timed(f)
		w.Sim.After(max(period, took), label, tick)
	}
	w.Sim.After(period, label, tick)
}

// simLock is a lock in simulated time: the calls that take it run at once,
// in the order they come, but a call that comes while an earlier one still
// holds it -- in the simulated time of its pass -- waits until that one
// released it. Shared holders exclude exclusive ones only.
type simLock struct {
	w *World
	// freeAt is when the last exclusive holder released it; sharedFreeAt
	// when the last shared one did.
	freeAt, sharedFreeAt time.Time
}

// lock waits in the running pass until the lock is free for this holder.
func (l *simLock) lock(shared bool) {
	free := l.freeAt
	if !shared && l.sharedFreeAt.After(free) {
		free = l.sharedFreeAt
	}
	if now := l.w.passTime(); free.After(now) {
		l.w.wait(free.Sub(now))
	}
}

// unlock releases the lock at the running pass's time.
func (l *simLock) unlock(shared bool) {
	now := l.w.passTime()
	switch {
	case shared && now.After(l.sharedFreeAt):
		l.sharedFreeAt = now
	case !shared && now.After(l.freeAt):
		l.freeAt = now
	}
}

// newLocal serves a site's core as its operator does, under the operator's
// one mutex -- here a lock in simulated time, so that a call made while
// another holds it waits as long as that one holds it.
func newLocal(w *World, control *core.Site) *storageapi.Local {
	lock := &simLock{w: w}
	return storageapi.NewLocalWith(func(context.Context) (*core.Site, func(), error) {
		lock.lock(false)
		return control, func() { lock.unlock(false) }, nil
	}, control.Cluster)
}
