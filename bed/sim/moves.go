package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/workload"
)

// Failover is Ramen's unplanned fail-over: the hub makes the target site
// primary (Promote, forced on FailedPrecondition) and the old site secondary
// with autoResync -- delivered only when the hub reaches it again. Until then
// the application left running on the old site keeps writing: the diverged
// tail, which a separate instance of the application writes.
func (w *World) Failover(name, to string) (workload.Verdict, error) {
	a, err := w.app(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	from := a.site
	w.event(to, reports.EventAction, "fail over %s from %s to %s", name, from, to)
	var tail *ramen.Tail
	if from != "" {
		if a.running() {
			model, err := w.newModel(a.spec, name+"~tail")
			if err != nil {
				return workload.Verdict{}, err
			}
			node, devices := a.node, a.devices
			tail = &ramen.Tail{Model: model, Site: from, Devices: devices, Stop: func() error {
				closeAll(devices)
				w.unstage(node, a.volumes)
				return nil
			}}
		}
		a.site, a.node, a.devices, a.evicted, a.restartAt = "", nil, nil, nil, time.Time{}
	}
	if err := w.ramen.Failover(a.ramen, from, to, tail); err != nil {
		return workload.Verdict{}, err
	}
	return w.land(a, to, false)
}

// Relocate is Ramen's planned relocation: the application stops and its
// volumes are unstaged, the old site turns secondary and resyncs until its
// data is protected, then the target site is promoted.
func (w *World) Relocate(name, to string) (workload.Verdict, error) {
	a, err := w.app(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	from := a.site
	if from == to {
		return workload.Verdict{}, fmt.Errorf("relocate %s: it runs on %s already", name, to)
	}
	w.event(from, reports.EventAction, "relocate %s from %s to %s", name, from, to)
	w.stop(a)
	if err := w.ramen.Relocate(a.ramen, from, to); err != nil {
		return workload.Verdict{}, err
	}
	return w.land(a, to, true)
}

// land starts the application on site and verifies what it finds there,
// before it writes anything: the verdict of the move. The application then
// continues from what survived.
func (w *World) land(a *app, site string, planned bool) (workload.Verdict, error) {
	start := w.Sim.Now()
	if err := w.start(a, w.Site(site)); err != nil {
		return workload.Verdict{}, err
	}
	verdict := a.model.Verify(a.devices, w.Sim.Now())
	w.checkLoss(a, verdict, planned)
	w.event(site, reports.EventRole, "%s runs on %s after %s: %d acknowledged writes lost",
		a.spec.Name, site, w.Sim.Now().Sub(start), verdict.LostAcknowledged())
	if !verdict.Consistent() {
		return verdict, fmt.Errorf("%s on %s: %s", a.spec.Name, site, verdict.String())
	}
	if err := a.model.Resume(verdict); err != nil {
		return verdict, err
	}
	return verdict, nil
}

// checkLoss holds the volume invariant of a move (bed.MoveLosses). A
// member whose origin the records no longer show is not checked.
func (w *World) checkLoss(a *app, verdict workload.Verdict, planned bool) {
	origin := func(i int) (time.Time, error) {
		if taken, ok := w.originTakenAt(a, i); ok {
			return taken, nil
		}
		return time.Time{}, errors.New("origin not recorded")
	}
	broken, _ := bed.MoveLosses(a.spec.Name, verdict, planned, origin, w.offset)
	for _, v := range broken {
		w.violate(v.Invariant, v.Message)
	}
}

// originTakenAt finds when the snapshot the application's new member of
// volume i was cloned from was taken on the old site.
func (w *World) originTakenAt(a *app, i int) (time.Time, bool) {
	defer w.unfaulted()()
	ref, err := chain.ParseRef(a.volumes[i].handle)
	if err != nil {
		return time.Time{}, false
	}
	var end, source chain.Member
	records := w.records()[ref]
	for _, m := range records {
		if m.Successor.IsZero() && m.State == chain.Active {
			end = m
		}
	}
	for _, m := range records {
		if m.Ref == end.Predecessor {
			source = m
		}
	}
	newSite, oldSite := w.Site(string(end.Ref.Cluster)), w.Site(string(source.Ref.Cluster))
	v, err := newSite.Control.Volume(end.Ref)
	if err != nil {
		return time.Time{}, false
	}
	p, found, err := oldSite.Control.Pairing(source.Ref)
	if err != nil || !found {
		return time.Time{}, false
	}
	for _, s := range p.Snapshots {
		if s.GUID == v.Origin.GUID {
			return s.TakenAt, true
		}
	}
	return time.Time{}, false
}
