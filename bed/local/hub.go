package local

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/ramen"
)

// Timings of the bed's loop, in wall time.
const (
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

// pump lets real time pass (bed.WallPump): the applications write, each
// site's csi-addons controller calls its driver for the VolumeReplications
// due, the checks run. It returns when done holds (true) or limit passed
// (false); a nil done runs for the whole limit and returns true.
func (b *Bed) pump(done func() bool, limit time.Duration) bool {
	return bed.WallPump{
		StepEvery: b.options.wall(stepPeriod),
		Step: func() {
			began := time.Now()
			b.apps.Step()
			if took := time.Since(began); took > slowCall {
				fmt.Fprintf(b.options.Log, "local bed: a slow application step: %s\n", took.Round(time.Millisecond))
			}
		},
		Tick: func(now time.Time) {
			if now.Sub(b.lastCheck) >= observePeriod {
				b.observe()
			}
		},
		Round: b.startRound,
	}.Run(done, limit)
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
	return bed.StartRound(calls, callLimit, func(ctx context.Context, c due) time.Time {
		made, began := len(c.vr.Calls), time.Now()
		again := c.vr.Reconcile(ctx, ramen.GRPC{C: c.s.replication})
		if took := time.Since(began); took > slowCall {
			fmt.Fprintf(b.options.Log, "local bed: slow csi-addons calls on %s: %v took %s\n", c.s.name, c.vr.Calls[made:],
				took.Round(time.Millisecond))
		}
		return time.Now().Add(max(b.options.wall(again), vrFloor))
	}, func(c due, next time.Time) { c.vr.Due = next })
}
