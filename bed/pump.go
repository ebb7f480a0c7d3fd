package bed

import (
	"context"
	"sync"
	"time"
)

// WallPump is the loop by which a bed on the wall clock (bed/local,
// bed/real) lets time pass: the applications step every StepEvery, Tick
// runs the bed's periodic checks at every look, and rounds of the sites'
// csi-addons controllers run on goroutines of their own while the
// applications go on writing (a call to a partitioned site waits for its
// timeout). A round's channel yields, once its calls returned, the
// function that records their outcome; done is asked, and that function
// run, only between rounds, when no goroutine touches the bed's
// VolumeReplications.
type WallPump struct {
	StepEvery time.Duration
	Step      func()
	// Tick runs the checks that are due at now (each bed keeps when it
	// last ran them).
	Tick func(now time.Time)
	// Round starts a round; nil when nothing is due.
	Round func() <-chan func()
	// Held, when set, names what holds the bed's sites up from beside it
	// now -- the cuts of a run beside this one on the same sites -- or ""
	// for nothing. A wait for done never times out while held, and the time
	// it was held does not count against its limit (up to HoldCeiling): its
	// verdict is the story's own, not another run's faults. Waited is told
	// of each hold once it ended (or the wait did), and for how long.
	Held   func() string
	Waited func(what string, d time.Duration)
}

// HoldCeiling bounds how much a wait is lengthened by holds beside it: a run
// beside that never lifts its cuts cannot hold this one for ever.
const HoldCeiling = 30 * time.Minute

// pumpPause is the longest the loop sleeps between looks.
const pumpPause = 20 * time.Millisecond

// Run pumps until done holds (true) or limit passed (false); a nil done
// runs for the whole limit and returns true. The limit of a wait for done
// does not count the time Held held it.
func (p WallPump) Run(done func() bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	nextStep := time.Now()
	var hold holding
	if done != nil && p.Held != nil {
		defer func() { hold.end(time.Now(), p.Waited) }()
	}
	var round <-chan func()
	for {
		if round == nil {
			if done != nil && done() {
				return true
			}
			round = p.Round()
		}
		now := time.Now()
		if done != nil && p.Held != nil {
			deadline = hold.look(now, p.Held(), deadline, p.Waited)
		}
		if !now.Before(deadline) && !hold.holds(now) {
			if round != nil {
				(<-round)()
			}
			return done == nil || done()
		}
		if !now.Before(nextStep) {
			p.Step()
			nextStep = now.Add(p.StepEvery)
		}
		p.Tick(now)
		wait := min(pumpPause, time.Until(nextStep))
		if !hold.holds(now) {
			wait = min(wait, time.Until(deadline))
		}
		pause := time.NewTimer(wait)
		select {
		case finish := <-round:
			finish()
			round = nil
			pause.Stop()
		case <-pause.C:
		}
	}
}

// holding is a wait's record of the hold beside it: what holds it since
// when, and how long holds have lengthened it so far.
type holding struct {
	what       string
	since      time.Time
	lengthened time.Duration
}

// look takes what holds the wait at now ("" for nothing) and returns its
// deadline: moved on by a hold that ended, which Waited is told of. A hold
// that changes what it is (another cut beside) goes on as one.
func (h *holding) look(now time.Time, what string, deadline time.Time, waited func(string, time.Duration)) time.Time {
	switch {
	case what != "" && h.what == "":
		h.what, h.since = what, now
	case what != "":
		h.what = what
	case h.what != "":
		deadline = deadline.Add(h.end(now, waited))
	}
	return deadline
}

// holds reports whether the wait is held at now and may not time out: held
// beside, and not yet lengthened by HoldCeiling.
func (h *holding) holds(now time.Time) bool {
	return h.what != "" && h.lengthened+now.Sub(h.since) < HoldCeiling
}

// end closes the hold in force at now, if any: Waited is told, and it
// returns by how much the hold lengthens the wait.
func (h *holding) end(now time.Time, waited func(string, time.Duration)) time.Duration {
	if h.what == "" {
		return 0
	}
	d := min(now.Sub(h.since), HoldCeiling-h.lengthened)
	h.lengthened += d
	if waited != nil {
		waited(h.what, now.Sub(h.since))
	}
	h.what = ""
	return d
}

// StartRound runs call for each of calls on a goroutine of its own, each
// under a context that ends after limit, as a site's csi-addons controller
// runs its VolumeReplications' reconciles side by side. The channel yields,
// once every call returned, the function that hands each call its result
// (record); nil when there is no call.
func StartRound[C, R any](calls []C, limit time.Duration, call func(ctx context.Context, c C) R, record func(c C, r R)) <-chan func() {
	if len(calls) == 0 {
		return nil
	}
	finished := make(chan func(), 1)
	go func() {
		results := make([]R, len(calls))
		var wg sync.WaitGroup
		for i, c := range calls {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				defer cancel()
				results[i] = call(ctx, c)
			})
		}
		wg.Wait()
		finished <- func() {
			for i, c := range calls {
				record(c, results[i])
			}
		}
	}()
	return finished
}
