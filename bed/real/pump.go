package real

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
)

// Timings of the bed's loop, in wall time (as the local bed's).
const (
	observePeriod = 2 * time.Second
	// callLimit bounds one reconcile of a VR: up to four calls (enable,
	// promote, promote(force), info) of a site's driver, each of which may
	// call the other site -- on a host whose load reaches 50.
	callLimit = time.Minute
	// vrFloor is the least pause between two reconciles of one VR; a VR
	// whose reconciles keep failing waits twice as long after each, up to
	// retryCeiling, as the csi-addons controller's work queue backs off.
	vrFloor      = 2 * time.Second
	retryCeiling = 30 * time.Second
	slowCall     = 2 * time.Second
	// progressPeriod is how often the bed says what it waits for.
	progressPeriod = 15 * time.Second
)

// pump lets real time pass (bed.WallPump): the applications write, each site's csi-addons
// controller (this process, until it runs in the sites) calls its driver
// for the VolumeReplications due, the checks run. It returns when done
// holds (true) or limit passed (false); a nil done runs the whole limit.
func (b *Bed) pump(done func() bool, limit time.Duration) bool {
	return bed.WallPump{
		StepEvery: b.options.wall(stepPeriod),
		Step:      b.apps.Step,
		Tick: func(now time.Time) {
			if now.Sub(b.lastCheck) >= observePeriod {
				b.observe()
			}
			if now.Sub(b.lastProgress) >= progressPeriod {
				b.progress()
			}
		},
		Round:  b.startRound,
		Held:   b.heldBy,
		Waited: b.waitedBeside,
	}.Run(done, limit)
}

// heldBy names the cuts the beds beside this one (in this process, on the
// same sites) hold now, or "": a wait of this bed does not count the time
// they hold against its limit (bed.WallPump's Held), for they are no part of
// its story.
func (b *Bed) heldBy() string {
	cuts := inForce.others(b.chaosTable())
	if len(cuts) == 0 {
		return ""
	}
	return "the cuts beside (" + pathList(cuts) + ")"
}

// waitedBeside puts a hold on the timeline and adds it to HeldBeside.
func (b *Bed) waitedBeside(what string, d time.Duration) {
	b.heldBeside += d
	b.event("", reports.EventAction, "waited %s for %s to lift; not counted against the wait's limit",
		d.Round(100*time.Millisecond), what)
}

// HeldBeside is how long this run's waits were held up by the cuts of the
// beds beside it (bed.SharedSites).
func (b *Bed) HeldBeside() time.Duration { return b.heldBeside }

// FaultsBeside are the spans in which the beds beside this one held cuts
// since it attached (bed.SharedSites).
func (b *Bed) FaultsBeside() []bed.Window { return inForce.spansBeside(b.chaosTable(), b.started) }

// Run lets d of a scenario's time pass: d / TimeScale of the wall clock.
func (b *Bed) Run(d time.Duration) error {
	b.logf("", "the scenario's %s pass (%s of wall time)", d, b.options.wall(d))
	b.pump(nil, b.options.wall(d))
	return nil
}

// startRound runs a round of the hub and every site's csi-addons
// controller, each VR by a goroutine of its own; the channel yields, once
// every call returned, the function that records when each VR is due next.
func (b *Bed) startRound() <-chan func() {
	type due struct {
		s       *site
		vr      *ramen.VR
		object  vrObject
		reached bool
	}
	var calls []due
	b.ramen.Round(time.Now(), func(name string, vr *ramen.VR) {
		s, _ := b.site(name) // the driver's sites are the bed's
		o, err := b.vrObjectOf(vr)
		if err != nil {
			b.violate("bed: a VolumeReplication of no volume", err.Error())
			vr.Due = time.Now().Add(retryCeiling)
			return
		}
		calls = append(calls, due{s, vr, o, b.reaches(name)})
	})
	type outcome struct {
		again time.Duration
		ended time.Time
	}
	return bed.StartRound(calls, callLimit, func(ctx context.Context, c due) outcome {
		made, began := len(c.vr.Calls), time.Now()
		again := b.reconcileObject(ctx, c.s, c.vr, c.object, c.reached)
		if took := time.Since(began); took > slowCall {
			b.logf(c.s.Site, "slow VolumeReplication pass: %v took %s", c.vr.Calls[made:], took.Round(time.Millisecond))
		}
		return outcome{again, time.Now()}
	}, func(c due, o outcome) {
		c.vr.Due = b.due(c.vr, o.ended, o.again)
		for _, l := range b.phases.take() {
			b.event(l.site, reports.EventAction, "%s", l.detail)
		}
	})
}

// due is when the VR is reconciled next: when its controller asked, in
// wall time; after a failed call, with the work queue's backoff, saying
// so on the log.
func (b *Bed) due(vr *ramen.VR, ended time.Time, again time.Duration) time.Time {
	if vr.Failing == 0 {
		return ended.Add(max(b.options.wall(again), vrFloor))
	}
	backoff := min(vrFloor<<min(vr.Failing-1, 8), retryCeiling)
	b.logf(vr.Site, "%s (failed %d in a row; again in %s)", vr.LastError, vr.Failing, backoff)
	return ended.Add(backoff)
}

// progress says, after progressPeriod without news, which
// VolumeReplications have not reached what they want yet (the errors
// themselves are on the log as they come: see due).
func (b *Bed) progress() {
	b.lastProgress = time.Now()
	var waiting []string
	for _, a := range b.apps.All() {
		name := a.Spec.Name
		for _, s := range b.Sites() {
			vrs := a.Ramen.VRs(s)
			pending, failing := 0, 0
			for _, vr := range vrs {
				if !vr.Done() {
					pending++
					failing = max(failing, vr.Failing)
				}
			}
			if pending == 0 {
				continue
			}
			line := fmt.Sprintf("%s on %s: %d of %d VRs not %s yet", name, s, pending, len(vrs), vrs[0].Wants)
			if failing > 0 {
				line += fmt.Sprintf(" (their calls failed %d times in a row)", failing)
			}
			waiting = append(waiting, line)
		}
	}
	if len(waiting) > 0 {
		b.logf("", "waiting: %s", strings.Join(waiting, "; "))
	}
}
