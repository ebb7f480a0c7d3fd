package sim

import (
	"context"
	"slices"
	"time"

	"github.com/baton-dr/baton/storage/chain"
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

// everyPass runs f as a pass at each period, the first after a phase drawn
// from (0, period] (the loops of a world do not all tick together); a pass
// that took longer than period delays the next, as a controller's loop that
// is still busy when its ticker fires.
func (w *World) everyPass(period time.Duration, label string, f func()) {
	var tick func()
	tick = func() {
		took := w.Timed(f)
		w.Sim.After(max(period, took), label, tick)
	}
	w.Sim.After(time.Duration(1+w.variation.Int64N(int64(period))), label, tick)
}

// simLock is a lock in simulated time. The calls that take it run at once,
// in the order they come; each holds it over an interval of simulated time
// -- from when its pass took it to when its pass let it go. A call whose
// pass reaches the lock while another's interval covers that instant waits
// until the interval ends; shared holders exclude exclusive ones only. A
// hold that lies wholly after a call's instant (a pass far ahead of the
// clock) does not make it wait: the two ran in the other order.
type simLock struct {
	w     *World
	holds []simHold // not ended before the clock, in the order taken
	// taken is when the running holder took it.
	taken time.Time
}

// simHold is one holder's interval.
type simHold struct {
	from, until time.Time
	shared      bool
}

// lock waits in the running pass until no conflicting hold covers its instant.
func (l *simLock) lock(shared bool) {
	now := l.w.Sim.Now()
	l.holds = slices.DeleteFunc(l.holds, func(h simHold) bool { return !h.until.After(now) })
	at := l.w.passTime()
	for waited := true; waited; {
		waited = false
		for _, h := range l.holds {
			if (!shared || !h.shared) && !h.from.After(at) && h.until.After(at) {
				at, waited = h.until, true
			}
		}
	}
	if start := l.w.passTime(); at.After(start) {
		l.w.wait(at.Sub(start))
	}
	l.taken = at
}

// unlock ends the running holder's interval at its pass's time.
func (l *simLock) unlock(shared bool) {
	if until := l.w.passTime(); until.After(l.taken) {
		l.holds = append(l.holds, simHold{from: l.taken, until: until, shared: shared})
	}
}

// newLocal serves a site's core as its operator does (storageapi.Local),
// with locks that take simulated time and its peers across the network.
func newLocal(w *World, s *Site, control *core.Site) *storageapi.Local {
	locks := &simLocks{w: w, site: simLock{w: w}, allocation: simLock{w: w}, chains: map[chain.Ref]*simLock{}}
	return storageapi.NewLocal(control, storageapi.WithLocks(locks), storageapi.WithCourier(courier{site: s}),
		storageapi.WithCommit(s.store.commit), storageapi.WithFailures(func(err error) { w.Sim.Logf("error", "%s: %v", s.Name, err) }))
}

// simLocks are storageapi.Locks in simulated time: a call waits, in its
// pass, for the holders before it to release what it needs.
type simLocks struct {
	w                *World
	site, allocation simLock
	chains           map[chain.Ref]*simLock
}

func (l *simLocks) Lock(_ context.Context, need storageapi.Need) (func(), error) {
	shared := !need.Site
	l.site.lock(shared)
	held := []*simLock{}
	for _, root := range need.Chains {
		c, ok := l.chains[root]
		if !ok {
			c = &simLock{w: l.w}
			l.chains[root] = c
		}
		c.lock(false)
		held = append(held, c)
	}
	if need.Allocation {
		l.allocation.lock(false)
		held = append(held, &l.allocation)
	}
	return func() {
		for _, h := range held {
			h.unlock(false)
		}
		l.site.unlock(shared)
	}, nil
}
