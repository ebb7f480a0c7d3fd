package apps

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
	"github.com/baton-dr/baton/workload/workloadtest"
)

// testPlatform is a test double of a bed: volumes are in-memory devices, a
// pod holds them at once, time moves a second a step. It runs the
// applications named in own as itself (ownApplication), the others as their
// models, and journals what the applications ask of it.
type testPlatform struct {
	now     time.Time
	own     map[string]*ownApplication
	devices map[string]*workloadtest.Device // by handle
	journal []string
}

func newTestPlatform(own ...string) *testPlatform {
	p := &testPlatform{now: time.Unix(1e9, 0), own: map[string]*ownApplication{}, devices: map[string]*workloadtest.Device{}}
	for _, name := range own {
		p.own[name] = &ownApplication{}
	}
	return p
}

func (p *testPlatform) Now() time.Time { return p.now }
func (p *testPlatform) Until(done func() bool, limit time.Duration) bool {
	for end := p.now.Add(limit); !done(); p.now = p.now.Add(time.Second) {
		if !p.now.Before(end) {
			return false
		}
	}
	return true
}
func (p *testPlatform) Rand(name string) *rand.Rand {
	return rand.New(rand.NewPCG(1, uint64(len(name))))
}
func (p *testPlatform) CreateVolume(site, app string, v workload.VolumeSpec) (string, error) {
	handle := fmt.Sprintf("%s/%s-%s", site, app, v.Name)
	p.devices[handle] = workloadtest.NewDevice(int64(v.SizeBytes))
	p.journal = append(p.journal, "create "+handle)
	return handle, nil
}
func (p *testPlatform) StartPod(site, app string, volumes []Volume) (Pod, error) {
	pod := &testPod{devices: workload.Devices{}}
	for _, v := range volumes {
		pod.devices[v.Name] = p.devices[v.Handle]
	}
	p.journal = append(p.journal, "start "+app+" on "+site)
	return pod, nil
}
func (p *testPlatform) OriginTakenAt(string) (time.Time, error)         { return p.now, nil }
func (p *testPlatform) Event(string, reports.EventKind, string, ...any) {}
func (p *testPlatform) Violate(invariant, message string) {
	p.journal = append(p.journal, "violation "+invariant+": "+message)
}
func (p *testPlatform) At(t time.Time) string { return t.String() }
func (p *testPlatform) Wrote(app, site string) {
	p.journal = append(p.journal, "wrote "+app+" on "+site)
}
func (p *testPlatform) WriteFailed(a *App, err error) {
	p.journal = append(p.journal, "write failed "+a.Spec.Name+": "+err.Error())
}

// Run is the Runner: the applications in own run as themselves.
func (p *testPlatform) Run(spec bed.App) (Application, error) {
	if a, ok := p.own[spec.Name]; ok {
		return a, nil
	}
	return nil, nil
}

type testPod struct{ devices workload.Devices }

func (p *testPod) Node() string              { return "node" }
func (p *testPod) Running() bool             { return p.devices != nil }
func (p *testPod) Devices() workload.Devices { return p.devices }
func (p *testPod) Stop() error               { p.devices = nil; return nil }

// ownApplication is an application that runs as itself: one volume, and
// it counts what bed/apps asks of it.
type ownApplication struct {
	started, steps, verifies int
}

func (a *ownApplication) Volumes() []workload.VolumeSpec {
	return []workload.VolumeSpec{{Name: "data", SizeBytes: 1 << 20}}
}
func (a *ownApplication) Start(Pod) error { a.started++; return nil }
func (a *ownApplication) Step(time.Time, Pod) (bool, error) {
	a.steps++
	return false, nil
}
func (a *ownApplication) Verify(Pod, time.Time, func() (time.Time, error)) (workload.Verdict, error) {
	a.verifies++
	return workload.Verdict{Volumes: []workload.VolumeVerdict{{Volume: "data"}}}, nil
}
func (a *ownApplication) Resume(Pod, workload.Verdict) error { return nil }
func (a *ownApplication) Tail(string, Pod) (*ramen.Tail, error) {
	return nil, fmt.Errorf("no tail")
}

func newTestApps(p *testPlatform) *Apps {
	driver := &ramen.Driver{Sites: []string{"site-a", "site-b"}, Reaches: func(string) bool { return true },
		Until: p.Until, Limit: time.Minute, Event: p.Event, Violate: p.Violate}
	return New(Config{Platform: p, Ramen: driver, Sites: []string{"site-a", "site-b"}, Limit: time.Minute})
}

// A platform that runs an application as itself gets its volumes, its
// start, its steps and its verdicts from that application; the others run
// as their workload models, writing the pod's devices.
func TestARunnerRunsItsOwnApplicationsAndModelsTheRest(t *testing.T) {
	p := newTestPlatform("wp")
	s := newTestApps(p)
	for _, spec := range []bed.App{{Name: "wp", Kind: bed.WordPress, Site: "site-a"}, {Name: "gitea", Kind: bed.Gitea, Site: "site-a"}} {
		if err := s.Deploy(spec); err != nil {
			t.Fatal(err)
		}
	}
	own := p.own["wp"]
	wp, _ := s.App("wp")
	gitea, _ := s.App("gitea")
	if wp.Model != nil || wp.Application != Application(own) || own.started != 1 ||
		!slices.Equal(wp.Handles(), []string{"site-a/wp-data"}) {
		t.Fatalf("wp: model %v, started %d, handles %v; want its own application's one volume, started once",
			wp.Model, own.started, wp.Handles())
	}
	if gitea.Model == nil || len(gitea.Volumes) != len(gitea.Model.Volumes()) {
		t.Fatalf("gitea: model %v, volumes %v; want its workload model's", gitea.Model, gitea.Volumes)
	}
	for range 5 {
		s.Step()
		p.now = p.now.Add(time.Second)
	}
	if own.steps != 5 || !slices.Contains(p.journal, "wrote gitea on site-a") || slices.Contains(p.journal, "wrote wp on site-a") {
		t.Errorf("steps %d, journal %v: want wp stepped by itself, gitea's model writing", own.steps, p.journal)
	}
	if _, err := s.Verify("wp"); err != nil || own.verifies != 1 {
		t.Errorf("verify wp: %v, %d verdicts; want its own", err, own.verifies)
	}
	if v, err := s.Verify("gitea"); err != nil || !v.Consistent() || len(v.Volumes) != len(gitea.Volumes) {
		t.Errorf("verify gitea: %v, %v; want its model's consistent verdict over every volume", v, err)
	}
}

// An application does not land on the site its tail still writes on (the
// hub has not reached that site to delete the old pod): the new pod would
// hold the volumes beside the old one.
func TestALandingWhereTheTailStillWritesIsRefused(t *testing.T) {
	p := newTestPlatform()
	s := newTestApps(p)
	if err := s.Deploy(bed.App{Name: "wp", Kind: bed.WordPress, Site: "site-a"}); err != nil {
		t.Fatal(err)
	}
	a, _ := s.App("wp")
	a.Site, a.Pod = "", nil // failed over to site-b, which then went down with it
	a.Ramen.Tail = &ramen.Tail{Site: "site-a", Stop: func() error { return nil }}
	p.journal = nil
	_, err := s.land(a, "site-a", false)
	if err == nil || !strings.Contains(err.Error(), "its old pod still runs on site-a") {
		t.Fatalf("landing where the tail writes: %v", err)
	}
	if len(p.journal) != 0 || a.Site != "" {
		t.Errorf("journal %v, site %q: a refused landing started a pod", p.journal, a.Site)
	}
}
