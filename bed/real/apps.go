package real

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// stepPeriod is how often, in a scenario's time, an application performs
// one operation.
const stepPeriod = time.Second

// The applications run on the real bed through bed/apps, as on the other
// beds: its deploy, protection, moves and verdicts are bed/apps'. platform
// is what the real bed gives them: claims of the StorageClass baton bound
// by external-provisioner, pods the sites' schedulers place, the
// applications themselves when the bed has their images (webApp), and
// Ramen's claim handling (Retain, Restore).

// app is what the real bed keeps of an application beside bed/apps' App.
type app struct {
	name string
	// web is the application run as itself; nil for its workload model.
	web *webApp
	// pv is the persistent volume bound to each volume's claim, by volume
	// and site.
	pv map[string]map[string]string
	// writes are its acknowledged operations, by site, since the timeline
	// last counted them.
	writes map[string]int
}

// app is the bed's own part of the application named name.
func (b *Bed) app(name string) *app {
	x, ok := b.held[name]
	if !ok {
		panic(fmt.Sprintf("bed/real: bed/apps knows an application %q the bed does not", name))
	}
	return x
}

// platform is the real bed as bed/apps' Platform, Runner and Claims.
type platform struct {
	bed.WallClock
	b *Bed
}

// platform makes the bed's Platform; its clock and its models' seeds
// are bed.WallClock's.
func (b *Bed) platform() platform {
	return platform{bed.WallClock{Seed: b.options.Seed, Deployed: func() int { return len(b.apps.All()) }}, b}
}

var (
	_ apps.Platform = platform{}
	_ apps.Runner   = platform{}
	_ apps.Claims   = platform{}
)

func (p platform) Until(done func() bool, limit time.Duration) bool { return p.b.pump(done, limit) }

func (p platform) Event(site string, kind reports.EventKind, format string, args ...any) {
	p.b.event(site, kind, format, args...)
}

func (p platform) Violate(invariant, message string) { p.b.violate(invariant, message) }

func (p platform) Wrote(app, site string) { p.b.app(app).writes[site]++ }

func (p platform) WriteFailed(a *apps.App, err error) {
	p.b.violate("application: the primary refused a write", fmt.Sprintf("%s on %s: %v", a.Spec.Name, a.Site, err))
}

// OriginTakenAt finds when the snapshot the chain's active end was cloned
// from was ordered, from both sites' records.
func (p platform) OriginTakenAt(handle string) (time.Time, error) { return p.b.originTakenAt(handle) }

// Run keeps the bed's part of the application and runs it as itself when
// the bed has the application images (Options.AppImages); else bed/apps
// runs its workload model.
func (p platform) Run(spec bed.App) (apps.Application, error) {
	b := p.b
	x := &app{name: spec.Name, pv: map[string]map[string]string{}, writes: map[string]int{}}
	if b.options.AppImages != nil {
		s, err := b.site(spec.Site)
		if err != nil {
			return nil, err
		}
		if x.web, err = b.newWebApp(context.Background(), spec, s); err != nil {
			return nil, err
		}
	}
	b.held[spec.Name] = x
	if x.web == nil {
		return nil, nil
	}
	return x.web, nil
}

// CreateVolume claims the volume on the site (external-provisioner calls
// baton-csi's CreateVolume) in the run's namespace, made in every site
// first.
func (p platform) CreateVolume(site, name string, volume workload.VolumeSpec) (string, error) {
	b, ctx := p.b, context.Background()
	s, err := b.site(site)
	if err != nil {
		return "", err
	}
	for _, other := range b.sites {
		if err := b.ensureNamespace(ctx, other); err != nil {
			return "", fmt.Errorf("%s: the run's namespace: %w", other.Name, err)
		}
	}
	x := b.app(name)
	pv, handle, err := b.claim(ctx, s, x, volume)
	if err != nil {
		return "", err
	}
	x.pv[volume.Name] = map[string]string{site: pv}
	b.event(site, reports.EventAction, "%s's claim %s bound: %s", name, volume.Name, handle)
	return handle, nil
}

// StartPod starts the application on the site: the application itself,
// once it answers, or its model's pod, whose published devices the bed
// opens.
func (p platform) StartPod(site, name string, volumes []apps.Volume) (apps.Pod, error) {
	b, ctx := p.b, context.Background()
	s, err := b.site(site)
	if err != nil {
		return nil, err
	}
	x := b.app(name)
	pod := &appPod{b: b, app: x, site: s}
	if x.web != nil {
		if err := b.deployWeb(ctx, x.web, s); err != nil {
			return nil, err
		}
		pod.running = true
		return pod, nil
	}
	uid, err := b.startPod(ctx, s, name, volumes)
	if err != nil {
		return nil, err
	}
	if pod.devices, err = b.openDevices(s, x, volumes, uid); err != nil {
		return nil, err
	}
	pod.running = true
	return pod, nil
}

// Retain sets the application's persistent volumes on the site to be kept
// when their claims go, as Ramen's VRG does before it protects them.
func (p platform) Retain(a *apps.App, site string) error {
	s, err := p.b.site(site)
	if err != nil {
		return err
	}
	x := p.b.app(a.Spec.Name)
	for _, v := range a.Volumes {
		if err := p.b.retain(context.Background(), s, x.pv[v.Name][site]); err != nil {
			return err
		}
	}
	return nil
}

// Restore makes the application's claims on the site where it has none
// yet, bound to their volumes' handles, as Ramen's VRG restores them
// before it makes the site's VolumeReplications (which name the claims).
func (p platform) Restore(a *apps.App, site string) error {
	s, err := p.b.site(site)
	if err != nil {
		return err
	}
	x := p.b.app(a.Spec.Name)
	for _, v := range a.Volumes {
		if x.pv[v.Name][site] != "" {
			continue
		}
		pv, err := p.b.restoreClaim(context.Background(), s, x, v)
		if err != nil {
			return err
		}
		x.pv[v.Name][site] = pv
	}
	return nil
}

// appPod is an application's pods on a site: its model's one pod, holding
// the claims as raw block devices the bed opened, or the application's own
// (its Deployments').
type appPod struct {
	b       *Bed
	app     *app
	site    *site
	devices workload.Devices // the model's; nil for an application run as itself
	running bool
}

func (p *appPod) Running() bool { return p.running }

func (p *appPod) Devices() workload.Devices { return p.devices }

// Node is the node the site's scheduler put the pods on; "" when that
// cannot be read (the bed's log says why).
func (p *appPod) Node() string {
	node, err := p.b.appPodNode(context.Background(), p.site, p.app)
	if err != nil {
		p.b.logf(p.site.Site, "where %s runs: %v", p.app.name, err)
		return ""
	}
	return node
}

// Stop stops the application's writing and deletes its pods, waiting until
// they are gone: kubelet has unpublished and unstaged the volumes.
func (p *appPod) Stop() error {
	if !p.running {
		return nil
	}
	p.running = false
	ctx := context.Background()
	if w := p.app.web; w != nil {
		w.writer.Stop()
		w.writer = nil
		return p.b.undeployWeb(ctx, w, p.site)
	}
	apps.CloseDevices(p.devices)
	return p.b.deletePod(ctx, p.site, p.app.name)
}

// originTakenAt finds when the snapshot the chain's active end was cloned
// from was ordered, from both sites' records (apps.OriginTakenAt).
func (b *Bed) originTakenAt(handle string) (time.Time, error) {
	return apps.OriginTakenAt(handle, b.records()...)
}
