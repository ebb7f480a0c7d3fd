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
}

// pumpPause is the longest the loop sleeps between looks.
const pumpPause = 20 * time.Millisecond

// Run pumps until done holds (true) or limit passed (false); a nil done
// runs for the whole limit and returns true.
func (p WallPump) Run(done func() bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	nextStep := time.Now()
	var round <-chan func()
	for {
		if round == nil {
			if done != nil && done() {
				return true
			}
			round = p.Round()
		}
		now := time.Now()
		if !now.Before(deadline) {
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
		pause := time.NewTimer(min(pumpPause, time.Until(nextStep), time.Until(deadline)))
		select {
		case finish := <-round:
			finish()
			round = nil
			pause.Stop()
		case <-pause.C:
		}
	}
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
