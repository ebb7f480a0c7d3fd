package local

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/baton-dr/baton/bed/ramen"
)

// Timings of the bed's loop, in wall time.
const (
	// pumpPause is the longest the loop sleeps between looks.
	pumpPause = 20 * time.Millisecond
	// observePeriod is how often the chains are checked and the writes
	// entered in the timeline.
	observePeriod = time.Second
	// callLimit bounds one csi-addons call.
	callLimit = 30 * time.Second
	// vrFloor is the least pause between two reconciles of one VR: Ramen's
	// intervals scaled down would otherwise call the driver back to back,
	// and each call takes the site operator's one mutex.
	vrFloor = 2 * time.Second
	// slowCall: a step or a call that takes longer is logged.
	slowCall = time.Second
)

// pump lets real time pass: the applications write, each site's csi-addons
// controller calls its driver for the VolumeReplications due, the checks
// run. It returns when done holds (true) or limit passed (false); a nil
// done runs for the whole limit and returns true.
//
// The csi-addons calls run in rounds on goroutines of their own while the
// applications go on writing (a call to a partitioned site waits for its
// timeout); done is asked, and wishes are delivered, only between rounds,
// when no goroutine touches the VRs.
func (b *Bed) pump(done func() bool, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	nextStep := time.Now()
	var round <-chan func()
	for {
		if round == nil {
			if done != nil && done() {
				return true
			}
			round = b.startRound()
		}
		now := time.Now()
		if !now.Before(deadline) {
			if round != nil {
				(<-round)()
			}
			return done == nil || done()
		}
		if !now.Before(nextStep) {
			began := time.Now()
			b.apps.Step()
			if took := time.Since(began); took > slowCall {
				fmt.Fprintf(b.options.Log, "local bed: a slow application step: %s\n", took.Round(time.Millisecond))
			}
			nextStep = now.Add(b.options.wall(stepPeriod))
		}
		if now.Sub(b.lastCheck) >= observePeriod {
			b.observe()
		}
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

// Run lets d of a scenario's time pass: d / TimeScale of the wall clock.
func (b *Bed) Run(d time.Duration) error {
	b.pump(nil, b.options.wall(d))
	return nil
}

// startRound runs a round of the hub and every site's csi-addons
// controller: the hub delivers its wishes to the sites it reaches, and each
// site calls its driver for the VRs due, in parallel (each VR by one
// goroutine) as the sites' controllers would. The channel yields, once every
// call returned, the function that records when each VR is due next; nil
// when none is due.
func (b *Bed) startRound() <-chan func() {
	type due struct {
		s  *site
		vr *ramen.VR
	}
	var calls []due
	b.ramen.Round(time.Now(), func(name string, vr *ramen.VR) {
		s, _ := b.site(name) // the driver's sites are the bed's
		calls = append(calls, due{s, vr})
	})
	if len(calls) == 0 {
		return nil
	}
	finished := make(chan func(), 1)
	go func() {
		next := make([]time.Time, len(calls))
		var wg sync.WaitGroup
		for i, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), callLimit)
				defer cancel()
				made, began := len(c.vr.Calls), time.Now()
				again := c.vr.Reconcile(ctx, ramen.GRPC{C: c.s.replication})
				if took := time.Since(began); took > slowCall {
					fmt.Fprintf(b.options.Log, "local bed: slow csi-addons calls on %s: %v took %s\n", c.s.name, c.vr.Calls[made:],
						took.Round(time.Millisecond))
				}
				next[i] = time.Now().Add(max(b.options.wall(again), vrFloor))
			}()
		}
		wg.Wait()
		finished <- func() {
			for i, c := range calls {
				c.vr.Due = next[i]
			}
		}
	}()
	return finished
}
