package real

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// stepPeriod is how often, in a scenario's time, an application performs
// one operation.
const stepPeriod = time.Second

// app is one application: its claims, Ramen's view of it, and either the
// application itself (web: WordPress or Gitea, written through its HTTP
// API) or a workload model writing the devices its pod holds (model).
type app struct {
	spec    bed.App
	web     *webApp
	model   workload.Workload
	volumes []*appVolume
	site    string // where it runs; "" while stopped
	devices workload.Devices
	ramen   *ramen.App
	writes  map[string]int
}

type appVolume struct {
	name   string // the workload's volume name, and its claim's
	handle string // the CSI handle: the chain's root, kept for ever
	size   uint64
	pv     map[string]string // the persistent volume bound to the claim, per site
	// filesystem: the claim is mounted (an application's own), not a raw
	// block device (a workload model's).
	filesystem bool
}

func (b *Bed) newModel(spec bed.App, name string) (workload.Workload, error) {
	rng := rand.New(rand.NewPCG(b.options.Seed, uint64(len(name))<<32|uint64(len(b.appOrder))))
	return spec.Kind.Model(name, rng)
}

// Deploy claims the application's volumes on its site (external-provisioner
// calls baton-csi's CreateVolume) and starts it there: the application
// itself when the bed has the application images (Options.AppImages),
// else its workload model's pod.
func (b *Bed) Deploy(spec bed.App) error {
	if _, exists := b.apps[spec.Name]; exists {
		return fmt.Errorf("application %q is deployed already", spec.Name)
	}
	s, err := b.site(spec.Site)
	if err != nil {
		return err
	}
	a := &app{spec: spec, writes: map[string]int{}}
	type volume struct {
		name string
		size uint64
	}
	var volumes []volume
	if b.options.AppImages != nil {
		if a.web, err = b.newWebApp(context.Background(), spec, s); err != nil {
			return err
		}
		for _, name := range a.web.client.Volumes() {
			volumes = append(volumes, volume{name, webVolumeBytes(name)})
		}
	} else {
		if a.model, err = b.newModel(spec, spec.Name); err != nil {
			return err
		}
		for _, v := range a.model.Volumes() {
			volumes = append(volumes, volume{v.Name, v.SizeBytes})
		}
	}
	ctx := context.Background()
	for _, other := range b.sites {
		if err := b.ensureNamespace(ctx, other); err != nil {
			return fmt.Errorf("%s: the run's namespace: %w", other.Name, err)
		}
	}
	var handles []string
	for _, v := range volumes {
		av := &appVolume{name: v.name, size: v.size, filesystem: a.web != nil, pv: map[string]string{}}
		pv, handle, err := b.claim(ctx, s, av)
		if err != nil {
			return err
		}
		av.handle, av.pv[s.Site] = handle, pv
		a.volumes = append(a.volumes, av)
		handles = append(handles, handle)
	}
	a.ramen = b.ramen.Add(spec.Name, handles)
	b.apps[spec.Name] = a
	b.appOrder = append(b.appOrder, spec.Name)
	b.event(spec.Site, reports.EventAction, "deploy %s: claims %v bound", spec.Name, handles)
	return b.start(a, s)
}

// restoreClaims makes the application's claims on the site where it has
// none yet, bound to their volumes' handles, as Ramen's VRG restores them
// before it makes the site's VolumeReplications (which name the claims).
func (b *Bed) restoreClaims(a *app, s *site) error {
	for _, v := range a.volumes {
		if v.pv[s.Site] == "" {
			if err := b.restoreClaim(context.Background(), s, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// start starts the application on the site: the application itself,
// writing once it answers, or its model's pod, whose devices it opens.
func (b *Bed) start(a *app, s *site) error {
	ctx := context.Background()
	if err := b.restoreClaims(a, s); err != nil {
		return err
	}
	if a.web != nil {
		if err := b.deployWeb(ctx, a.web, s); err != nil {
			return err
		}
		a.site = s.Site
		return b.write(a)
	}
	uid, err := b.startPod(ctx, s, a)
	if err != nil {
		return err
	}
	devices, err := b.openDevices(s, a, uid)
	if err != nil {
		return err
	}
	a.site, a.devices = s.Site, devices
	return nil
}

// stop closes the application's devices and deletes its pod where it runs
// (and the tail's, if one still writes).
func (b *Bed) stop(a *app) error {
	var errs []error
	if t := a.ramen.Tail; t != nil {
		errs = append(errs, t.Stop())
		a.ramen.Tail = nil
	}
	if a.site == "" {
		return errors.Join(errs...)
	}
	s, err := b.site(a.site)
	if err != nil {
		return err
	}
	if a.web != nil {
		a.web.writer.Stop()
		a.web.writer = nil
		errs = append(errs, b.undeployWeb(context.Background(), a.web, s))
	} else {
		apps.CloseDevices(a.devices)
		errs = append(errs, b.deletePod(context.Background(), s, a.spec.Name))
	}
	a.site, a.devices = "", nil
	return errors.Join(errs...)
}

// step is one operation of every running application and of every tail.
func (b *Bed) step() {
	now := time.Now()
	for _, name := range b.appOrder {
		a := b.apps[name]
		if a.site != "" && a.model != nil {
			res, err := a.model.Step(now, a.devices)
			switch {
			case err == nil && res.Acknowledged:
				a.writes[a.site]++
			case err != nil && !errors.Is(err, workload.ErrStopped):
				b.violate("application: the primary refused a write", fmt.Sprintf("%s on %s: %v", a.spec.Name, a.site, err))
			}
		}
		if t := a.ramen.Tail; t != nil && t.Model != nil && t.Step(now) {
			a.writes[t.Site]++
		}
	}
}

// Protect retains the application's persistent volumes, as Ramen's VRG
// does before it protects them (a protected volume's data outlives its
// claim: the chain is the sites'), then asks the application's site for
// Primary VolumeReplications and waits until every volume shipped a first
// snapshot.
func (b *Bed) Protect(name string) error {
	a, err := b.app(name)
	if err != nil {
		return err
	}
	if a.site == "" {
		return fmt.Errorf("protect %s: it is not running", name)
	}
	s, err := b.site(a.site)
	if err != nil {
		return err
	}
	for _, v := range a.volumes {
		if err := b.retain(context.Background(), s, v.pv[s.Site]); err != nil {
			return fmt.Errorf("protect %s: %w", name, err)
		}
	}
	return b.ramen.Protect(a.ramen, a.site)
}

// Relocate is Ramen's planned relocation: once the target site is ready
// (ramen.Driver.PeerReady) the pod is deleted (kubelet
// unpublishes and unstages), the old site turns secondary and resyncs until
// its data is protected, the target site is promoted, and the pod starts
// there on the restored claims.
func (b *Bed) Relocate(name, to string) (workload.Verdict, error) {
	a, err := b.app(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	from := a.site
	if err := apps.MoveRefused("relocate", name, from, to, true); err != nil {
		return workload.Verdict{}, err
	}
	target, err := b.site(to)
	if err != nil {
		return workload.Verdict{}, err
	}
	b.event(from, reports.EventAction, "relocate %s from %s to %s", name, from, to)
	if err := b.ramen.PeerReady(a.ramen, to); err != nil {
		return workload.Verdict{}, err
	}
	if err := b.stop(a); err != nil {
		return workload.Verdict{}, err
	}
	if err := b.restoreClaims(a, target); err != nil {
		return workload.Verdict{}, err
	}
	if err := b.ramen.Relocate(a.ramen, from, to); err != nil {
		return workload.Verdict{}, err
	}
	return b.land(a, to, true)
}

// Failover is Ramen's unplanned fail-over: the target site is promoted
// (forced on FailedPrecondition) and the old site made secondary with
// autoResync once the hub reaches it again; until then the instance left
// running there keeps writing (the diverged tail).
func (b *Bed) Failover(name, to string) (workload.Verdict, error) {
	a, err := b.app(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	target, err := b.site(to)
	if err != nil {
		return workload.Verdict{}, err
	}
	from := a.site
	if err := apps.MoveRefused("fail over", name, from, to, false); err != nil {
		return workload.Verdict{}, err
	}
	if err := b.restoreClaims(a, target); err != nil {
		return workload.Verdict{}, err
	}
	b.event(to, reports.EventAction, "fail over %s from %s to %s", name, from, to)
	var tail *ramen.Tail
	if from != "" && a.web != nil {
		old, err := b.site(from)
		if err != nil {
			return workload.Verdict{}, err
		}
		a.web.writer.Stop()
		a.web.writer = nil
		t, err := b.webTail(a, old)
		if err != nil {
			return workload.Verdict{}, err
		}
		tail = &ramen.Tail{Site: from, Stop: t.stop}
		a.site = ""
	} else if from != "" {
		model, err := b.newModel(a.spec, name+"~tail")
		if err != nil {
			return workload.Verdict{}, err
		}
		old, err := b.site(from)
		if err != nil {
			return workload.Verdict{}, err
		}
		devices := a.devices
		tail = &ramen.Tail{Model: model, Site: from, Devices: devices, Stop: func() error {
			apps.CloseDevices(devices)
			return b.deletePod(context.Background(), old, a.spec.Name)
		}}
		a.site, a.devices = "", nil
	}
	if err := b.ramen.Failover(a.ramen, from, to, tail); err != nil {
		return workload.Verdict{}, err
	}
	return b.land(a, to, false)
}

// land starts the application on site and verifies what it finds there
// before it writes anything: the move's verdict.
func (b *Bed) land(a *app, site string, planned bool) (workload.Verdict, error) {
	start := time.Now()
	s, err := b.site(site)
	if err != nil {
		return workload.Verdict{}, err
	}
	if a.ramen.Tail != nil && a.ramen.Tail.Site == site {
		return workload.Verdict{}, fmt.Errorf("%s: its old pod still runs on %s", a.spec.Name, site)
	}
	if a.web != nil {
		return b.landWeb(a, s, planned, start)
	}
	if err := b.start(a, s); err != nil {
		return workload.Verdict{}, err
	}
	verdict := a.model.Verify(a.devices, time.Now())
	b.checkLoss(a, verdict, planned)
	b.event(site, reports.EventRole, "%s runs on %s after %s: %d acknowledged writes lost",
		a.spec.Name, site, time.Since(start).Round(time.Millisecond), verdict.LostAcknowledged())
	if !verdict.Consistent() {
		return verdict, fmt.Errorf("%s on %s: %s", a.spec.Name, site, verdict.String())
	}
	return verdict, a.model.Resume(verdict)
}

// Verify reads the application's volumes where it runs.
func (b *Bed) Verify(name string) (workload.Verdict, error) {
	a, err := b.app(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	if a.site == "" {
		return workload.Verdict{}, fmt.Errorf("application %q is not running", name)
	}
	if a.web != nil {
		v, err := a.web.readBack(context.Background(), time.Time{})
		return v.Workload(a.web.client.Volumes()), err
	}
	return a.model.Verify(a.devices, time.Now()), nil
}

// Where tells on which site the application runs.
func (b *Bed) Where(name string) (string, error) {
	a, err := b.app(name)
	if err != nil {
		return "", err
	}
	if a.site == "" {
		return "", fmt.Errorf("application %q is not running", name)
	}
	return a.site, nil
}

// Pod tells on which node the application's pod runs, as the site's
// scheduler placed it.
func (b *Bed) Pod(name string) (string, error) {
	site, err := b.Where(name)
	if err != nil {
		return "", err
	}
	s, err := b.site(site)
	if err != nil {
		return "", err
	}
	return b.appPodNode(context.Background(), s, b.apps[name])
}

func (b *Bed) app(name string) (*app, error) {
	a, ok := b.apps[name]
	if !ok {
		return nil, fmt.Errorf("no application %q", name)
	}
	return a, nil
}

// checkLoss holds the volume invariant of a move (bed.MoveLosses): the
// recovery point is when the site ordered the snapshot the active end was
// cloned from, on the host clock the writes were acknowledged by... within
// the nodes' clock, which is the host's (kind nodes share its kernel).
func (b *Bed) checkLoss(a *app, verdict workload.Verdict, planned bool) {
	origin := func(i int) (time.Time, error) { return b.originTakenAt(a.volumes[i].handle) }
	at := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	for _, v := range bed.MoveLosses(a.spec.Name, verdict, planned, origin, at) {
		b.violate(v.Invariant, v.Message)
	}
}

// originTakenAt finds when the snapshot the chain's active end was cloned
// from was ordered, from both sites' records (apps.OriginTakenAt).
func (b *Bed) originTakenAt(handle string) (time.Time, error) {
	sites := make([]apps.Records, 0, len(b.sites))
	for _, s := range b.sites {
		sites = append(sites, s.store)
	}
	return apps.OriginTakenAt(handle, sites...)
}
