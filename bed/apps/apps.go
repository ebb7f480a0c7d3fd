package apps

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// App is one application: what runs in its pod, its volumes, where its
// pod runs, and Ramen's view of it.
type App struct {
	Spec        bed.App
	Application Application
	// Model is the application's workload model when that is what runs
	// (Application is its); nil for an application run as itself.
	Model   workload.Workload
	Volumes []Volume
	// Site is where the application runs; "" while it is stopped.
	Site string
	// Pod is its pod on Site; nil while it is stopped.
	Pod Pod
	// Ramen is the application as the hub protects it: its wishes, each
	// site's VolumeReplications, the tail left writing after a fail-over.
	Ramen *ramen.App
}

// Running reports whether the application's pod runs and can write.
func (a *App) Running() bool { return a.Pod != nil && a.Pod.Running() }

// Handles are the CSI handles of the application's volumes, in order.
func (a *App) Handles() []string {
	out := make([]string, len(a.Volumes))
	for i, v := range a.Volumes {
		out[i] = v.Handle
	}
	return out
}

// Moves is the part of bed.Bed the applications answer, for a bed to embed
// (*Apps implements it).
type Moves interface {
	Deploy(spec bed.App) error
	Protect(name string) error
	Relocate(name, to string) (workload.Verdict, error)
	Failover(name, to string) (workload.Verdict, error)
	Verify(name string) (workload.Verdict, error)
	Where(name string) (string, error)
	Pod(name string) (string, error)
}

var _ Moves = (*Apps)(nil)

// Config is what New takes.
type Config struct {
	Platform Platform
	// Ramen is the bed's Ramen driver: its rounds are the bed's.
	Ramen *ramen.Driver
	// Sites are the bed's sites.
	Sites []string
	// Limit bounds a wait for a pod to run again.
	Limit time.Duration
}

// Apps are the applications of one bed, in the order they were deployed.
type Apps struct {
	config Config
	apps   []*App
}

// New returns a bed's applications, none deployed yet.
func New(config Config) *Apps {
	if config.Platform == nil || config.Ramen == nil || len(config.Sites) == 0 || config.Limit <= 0 {
		panic(fmt.Sprintf("bed/apps: incomplete config %+v", config))
	}
	return &Apps{config: config}
}

// All are the applications in the order they were deployed.
func (s *Apps) All() []*App { return slices.Clone(s.apps) }

// App finds an application by name.
func (s *Apps) App(name string) (*App, error) {
	for _, a := range s.apps {
		if a.Spec.Name == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("no application %q", name)
}

func (s *Apps) site(name string) error {
	if !slices.Contains(s.config.Sites, name) {
		return fmt.Errorf("no site %q (the bed has %v)", name, s.config.Sites)
	}
	return nil
}

// application is what runs spec: the platform's own (Runner), or its
// workload model.
func (s *Apps) application(spec bed.App) (Application, workload.Workload, error) {
	p := s.config.Platform
	if r, ok := p.(Runner); ok {
		application, err := r.Run(spec)
		if err != nil || application != nil {
			return application, nil, err
		}
	}
	w, err := newModel(p, spec, spec.Name)
	if err != nil {
		return nil, nil, err
	}
	return &model{spec: spec, platform: p, workload: w}, w, nil
}

// Deploy creates the application's volumes through its site's CSI
// controller and starts its pod there.
func (s *Apps) Deploy(spec bed.App) error {
	p := s.config.Platform
	if _, err := s.App(spec.Name); err == nil {
		return fmt.Errorf("application %q is deployed already", spec.Name)
	}
	if err := s.site(spec.Site); err != nil {
		return err
	}
	application, model, err := s.application(spec)
	if err != nil {
		return err
	}
	a := &App{Spec: spec, Application: application, Model: model}
	for _, v := range application.Volumes() {
		handle, err := p.CreateVolume(spec.Site, spec.Name, v)
		if err != nil {
			return fmt.Errorf("create volume %s on %s: %w", v.Name, spec.Site, err)
		}
		a.Volumes = append(a.Volumes, Volume{Name: v.Name, Handle: handle, SizeBytes: v.SizeBytes, Files: v.Files})
	}
	a.Ramen = s.config.Ramen.Add(spec.Name, a.Handles())
	s.apps = append(s.apps, a)
	p.Event(spec.Site, reports.EventAction, "deploy %s", spec.Name)
	pod, err := p.StartPod(spec.Site, spec.Name, a.Volumes)
	if err != nil {
		return err
	}
	a.Site, a.Pod = spec.Site, pod
	return application.Start(pod)
}

// Step is one operation of every running application and of every tail.
func (s *Apps) Step() {
	p := s.config.Platform
	now := p.Now()
	for _, a := range s.apps {
		if a.Running() {
			acknowledged, err := a.Application.Step(now, a.Pod)
			switch {
			case err == nil && acknowledged:
				p.Wrote(a.Spec.Name, a.Site)
			case err != nil && !errors.Is(err, workload.ErrStopped):
				p.WriteFailed(a, err)
			}
		}
		if t := a.Ramen.Tail; t != nil && t.Step(now) {
			p.Wrote(a.Spec.Name, t.Site)
		}
	}
}

// Protect asks the application's site for Primary VolumeReplications and
// waits until every volume shipped a first snapshot.
func (s *Apps) Protect(name string) error {
	a, err := s.App(name)
	if err != nil {
		return err
	}
	if a.Site == "" {
		return fmt.Errorf("protect %s: it is not running", name)
	}
	if c, ok := s.config.Platform.(Claims); ok {
		if err := c.Retain(a, a.Site); err != nil {
			return fmt.Errorf("protect %s: %w", name, err)
		}
	}
	return s.config.Ramen.Protect(a.Ramen, a.Site)
}

// Relocate is Ramen's planned relocation: once the target site is ready
// (ramen.Driver.PeerReady), the application stops and its volumes are
// unstaged, the old site turns secondary and resyncs until its
// data is protected, then the target site is promoted and the application
// starts there.
func (s *Apps) Relocate(name, to string) (workload.Verdict, error) {
	a, err := s.App(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	from := a.Site
	if err := MoveRefused("relocate", name, from, to, true); err != nil {
		return workload.Verdict{}, err
	}
	if err := s.site(to); err != nil {
		return workload.Verdict{}, err
	}
	s.config.Platform.Event(from, reports.EventAction, "relocate %s from %s to %s", name, from, to)
	if err := s.config.Ramen.PeerReady(a.Ramen, to); err != nil {
		return workload.Verdict{}, err
	}
	if err := s.stop(a); err != nil {
		return workload.Verdict{}, err
	}
	if err := s.restoreClaims(a, to); err != nil {
		return workload.Verdict{}, err
	}
	if err := s.config.Ramen.Relocate(a.Ramen, from, to); err != nil {
		return workload.Verdict{}, err
	}
	return s.land(a, to, true)
}

// Failover is Ramen's unplanned fail-over: the hub makes the target site
// primary (Promote, forced on FailedPrecondition) and the old site secondary
// with autoResync -- delivered only when the hub reaches it again. Until
// then the application left running on the old site keeps writing: the
// diverged tail, which a second instance of the application's model writes,
// so that the application's own history ends where the fail-over found it.
func (s *Apps) Failover(name, to string) (workload.Verdict, error) {
	a, err := s.App(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	if err := s.site(to); err != nil {
		return workload.Verdict{}, err
	}
	from := a.Site
	if err := MoveRefused("fail over", name, from, to, false); err != nil {
		return workload.Verdict{}, err
	}
	if err := s.restoreClaims(a, to); err != nil {
		return workload.Verdict{}, err
	}
	s.config.Platform.Event(to, reports.EventAction, "fail over %s from %s to %s", name, from, to)
	var tail *ramen.Tail
	if from != "" {
		if a.Running() {
			if tail, err = a.Application.Tail(from, a.Pod); err != nil {
				return workload.Verdict{}, err
			}
		}
		a.Site, a.Pod = "", nil
	}
	if err := s.config.Ramen.Failover(a.Ramen, from, to, tail); err != nil {
		return workload.Verdict{}, err
	}
	return s.land(a, to, false)
}

// land starts the application on site and verifies what it finds there
// before it writes anything: the move's verdict. The application then
// continues from what survived.
//
// It refuses a site where the tail still writes: the old pod would hold
// the volumes beside the new one.
func (s *Apps) land(a *App, site string, planned bool) (workload.Verdict, error) {
	p := s.config.Platform
	if t := a.Ramen.Tail; t != nil && t.Site == site {
		return workload.Verdict{}, fmt.Errorf("%s: its old pod still runs on %s", a.Spec.Name, site)
	}
	start := p.Now()
	pod, err := p.StartPod(site, a.Spec.Name, a.Volumes)
	if err != nil {
		return workload.Verdict{}, err
	}
	a.Site, a.Pod = site, pod
	var recoveryPoint func() (time.Time, error)
	if !planned {
		recoveryPoint = func() (time.Time, error) { return s.recoveryPoint(a) }
	}
	verdict, err := a.Application.Verify(pod, p.Now(), recoveryPoint)
	s.checkLoss(a, verdict, planned)
	p.Event(site, reports.EventRole, "%s runs on %s after %s: %d acknowledged writes lost",
		a.Spec.Name, site, p.Now().Sub(start), verdict.LostAcknowledged())
	if err != nil {
		return verdict, fmt.Errorf("%s on %s: %w", a.Spec.Name, site, err)
	}
	if !verdict.Consistent() {
		return verdict, fmt.Errorf("%s on %s: %s", a.Spec.Name, site, verdict.String())
	}
	return verdict, a.Application.Resume(pod, verdict)
}

// recoveryPoint is the oldest of the application's volumes' origins: what
// an unplanned move may have lost is what came after it (each volume's loss
// is then judged against its own origin, bed.MoveLosses).
func (s *Apps) recoveryPoint(a *App) (time.Time, error) {
	var oldest time.Time
	for _, v := range a.Volumes {
		origin, err := s.config.Platform.OriginTakenAt(v.Handle)
		if err != nil {
			return time.Time{}, fmt.Errorf("the recovery point of %s: %w", v.Name, err)
		}
		if oldest.IsZero() || origin.Before(oldest) {
			oldest = origin
		}
	}
	return oldest, nil
}

// restoreClaims makes the application's claims on site where the platform
// holds volumes through claims (Claims).
func (s *Apps) restoreClaims(a *App, site string) error {
	if c, ok := s.config.Platform.(Claims); ok {
		return c.Restore(a, site)
	}
	return nil
}

// checkLoss holds the volume invariant of a move (bed.MoveLosses); a
// volume whose origin the records do not show breaks it too.
func (s *Apps) checkLoss(a *App, verdict workload.Verdict, planned bool) {
	p := s.config.Platform
	origin := func(i int) (time.Time, error) {
		taken, err := p.OriginTakenAt(a.Volumes[i].Handle)
		if err == nil {
			p.Event("", reports.EventAction, "%s's %s: the recovery point (its origin ordered) %s, %s before the verdict",
				a.Spec.Name, verdict.Volumes[i].Volume, p.At(taken), p.Now().Sub(taken))
		}
		return taken, err
	}
	for _, v := range bed.MoveLosses(a.Spec.Name, verdict, planned, origin, p.At) {
		p.Violate(v.Invariant, v.Message)
	}
}

// stop deletes the application's pod where it runs.
func (s *Apps) stop(a *App) error {
	if a.Site == "" {
		return nil
	}
	var err error
	if a.Pod != nil {
		err = a.Pod.Stop()
	}
	a.Site, a.Pod = "", nil
	return err
}

// Close stops every application and every tail still writing.
func (s *Apps) Close() error {
	var errs []error
	for _, a := range s.apps {
		if t := a.Ramen.Tail; t != nil {
			errs = append(errs, t.Stop())
			a.Ramen.Tail = nil
		}
		errs = append(errs, s.stop(a))
	}
	return errors.Join(errs...)
}

// Verify reads the application's volumes where it runs, once its pod runs
// again if its node went down.
func (s *Apps) Verify(name string) (workload.Verdict, error) {
	a, err := s.App(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	if a.Site == "" {
		return workload.Verdict{}, fmt.Errorf("application %q is not running", name)
	}
	if !a.Running() && !s.config.Platform.Until(a.Running, s.config.Limit) {
		return workload.Verdict{}, fmt.Errorf("%s's pod on %s did not run again within %s", name, a.Site, s.config.Limit)
	}
	return a.Application.Verify(a.Pod, s.config.Platform.Now(), nil)
}

// Where tells on which site the application runs.
func (s *Apps) Where(name string) (string, error) {
	a, err := s.App(name)
	if err != nil {
		return "", err
	}
	if a.Site == "" {
		return "", fmt.Errorf("application %q is not running", name)
	}
	return a.Site, nil
}

// Pod tells on which node the application's pod runs.
func (s *Apps) Pod(name string) (string, error) {
	a, err := s.App(name)
	if err != nil {
		return "", err
	}
	if a.Pod == nil || a.Pod.Node() == "" {
		return "", fmt.Errorf("application %q is not running", name)
	}
	return a.Pod.Node(), nil
}
