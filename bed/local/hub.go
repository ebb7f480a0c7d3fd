package local

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/csi-addons/spec/lib/go/replication"

	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
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
			b.step()
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

// startRound runs every site's csi-addons controller once: the hub
// delivers its wishes to the sites it reaches, and each site calls its
// driver for the VRs due, in parallel (each VR by one goroutine) as the
// sites' controllers would. The channel yields, once every call returned,
// the function that records when each VR is due next; nil when none is due.
func (b *Bed) startRound() <-chan func() {
	type due struct {
		a  *app
		s  *site
		vr *ramen.VR
	}
	var calls []due
	now := time.Now()
	for _, name := range b.appOrder {
		a := b.apps[name]
		for _, s := range b.sites {
			if !b.hubCut[s.name] {
				b.deliver(a, s)
			}
			for _, vr := range a.vrs[s.name] {
				if !now.Before(a.next[vr]) {
					calls = append(calls, due{a, s, vr})
				}
			}
		}
	}
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
				again := c.vr.Reconcile(ctx, addonsClient{c.s.replication})
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
				c.a.next[c.vr] = next[i]
			}
		}
	}()
	return finished
}

// deliver applies the hub's wish to a site it reaches: the site's VRs want
// it, and a pod the hub deleted stops.
func (b *Bed) deliver(a *app, s *site) {
	if a.stopOn[s.name] {
		delete(a.stopOn, s.name)
		if t := a.tail; t != nil && t.site == s.name {
			closeAll(t.devices)
			if err := s.unstage(a.spec.Name, a.volumes); err != nil {
				b.violate("application: the old primary's pod does not stop", err.Error())
			}
			a.tail = nil
			b.event(s.name, reports.EventAction, "the hub deletes %s's pod on %s", a.spec.Name, s.name)
		}
	}
	want, ok := a.wants[s.name]
	if !ok {
		return
	}
	if len(a.vrs[s.name]) == 0 {
		for _, v := range a.volumes {
			a.vrs[s.name] = append(a.vrs[s.name], &ramen.VR{Handle: v.handle, Site: s.name})
		}
	}
	for _, vr := range a.vrs[s.name] {
		if vr.Wants != want.state || vr.AutoResync != want.autoResync {
			vr.Want(want.state, want.autoResync)
			a.next[vr] = time.Now()
			b.event(s.name, reports.EventAction, "%s's VolumeReplication %s wants %s (autoResync %v)", a.spec.Name, vr.Handle,
				want.state, want.autoResync)
		}
	}
}

// addonsClient is the csi-addons Replication service over the driver's
// unix socket, as ramen.VR calls it.
type addonsClient struct {
	c replication.ControllerClient
}

var _ ramen.Client = addonsClient{}

func (a addonsClient) EnableVolumeReplication(ctx context.Context, r *replication.EnableVolumeReplicationRequest) (*replication.EnableVolumeReplicationResponse, error) {
	return a.c.EnableVolumeReplication(ctx, r)
}

func (a addonsClient) DisableVolumeReplication(ctx context.Context, r *replication.DisableVolumeReplicationRequest) (*replication.DisableVolumeReplicationResponse, error) {
	return a.c.DisableVolumeReplication(ctx, r)
}

func (a addonsClient) PromoteVolume(ctx context.Context, r *replication.PromoteVolumeRequest) (*replication.PromoteVolumeResponse, error) {
	return a.c.PromoteVolume(ctx, r)
}

func (a addonsClient) DemoteVolume(ctx context.Context, r *replication.DemoteVolumeRequest) (*replication.DemoteVolumeResponse, error) {
	return a.c.DemoteVolume(ctx, r)
}

func (a addonsClient) ResyncVolume(ctx context.Context, r *replication.ResyncVolumeRequest) (*replication.ResyncVolumeResponse, error) {
	return a.c.ResyncVolume(ctx, r)
}

func (a addonsClient) GetVolumeReplicationInfo(ctx context.Context, r *replication.GetVolumeReplicationInfoRequest) (*replication.GetVolumeReplicationInfoResponse, error) {
	return a.c.GetVolumeReplicationInfo(ctx, r)
}
