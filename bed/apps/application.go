package apps

import (
	"fmt"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/workload"
)

// Application is what runs in an application's pod: what writes its
// volumes, and what reads them back to judge a move. Most beds run the
// application's workload model over the pod's devices (the default); a bed
// that runs the real application -- WordPress or Gitea in a pod of their
// own, written through their HTTP API -- gives its own (Runner).
type Application interface {
	// Volumes are the volumes the application needs, in a fixed order.
	Volumes() []workload.VolumeSpec
	// Start begins the application's writing once its pod first runs.
	Start(pod Pod) error
	// Step is one operation, when the bed's loop performs them; it reports
	// whether the operation was acknowledged. An application that writes on
	// its own acknowledges none here.
	Step(now time.Time, pod Pod) (acknowledged bool, err error)
	// Verify reads back what the pod's volumes hold and judges it against
	// what the application acknowledged. recoveryPoint, nil but after an
	// unplanned move, tells from when on a loss is allowed, for an
	// application whose verdict needs it before it reads.
	Verify(pod Pod, now time.Time, recoveryPoint func() (time.Time, error)) (workload.Verdict, error)
	// Resume goes on, in pod, from what a consistent verdict found.
	Resume(pod Pod, verdict workload.Verdict) error
	// Tail is the instance an unplanned move leaves writing in pod on site,
	// which stops writing for the application itself from then on.
	Tail(site string, pod Pod) (*ramen.Tail, error)
}

// Runner is a Platform that runs some applications as themselves. Run
// returns spec's Application, or nil for its workload model.
type Runner interface {
	Run(spec bed.App) (Application, error)
}

// model is an application run as its workload model, writing the pod's
// devices one operation a step.
type model struct {
	spec     bed.App
	platform Platform
	workload workload.Workload
}

// newModel is spec's workload model, its random source the platform's
// stream named name.
func newModel(p Platform, spec bed.App, name string) (workload.Workload, error) {
	return spec.Kind.Model(name, p.Rand(name))
}

func (m *model) Volumes() []workload.VolumeSpec { return m.workload.Volumes() }

func (m *model) Start(Pod) error { return nil }

func (m *model) Step(now time.Time, pod Pod) (bool, error) {
	res, err := m.workload.Step(now, pod.Devices())
	return err == nil && res.Acknowledged, err
}

// Verify reads the devices; the model judges each volume's loss against
// its own history, so it needs no recovery point.
func (m *model) Verify(pod Pod, now time.Time, _ func() (time.Time, error)) (workload.Verdict, error) {
	return m.workload.Verify(pod.Devices(), now), nil
}

func (m *model) Resume(_ Pod, verdict workload.Verdict) error { return m.workload.Resume(verdict) }

// TailName is the name the tail instance of an application writes under:
// what a check of the old primary's kept tail tells its blocks by.
func TailName(app string) string { return app + "~tail" }

// Tail is a second model ("<name>~tail") writing the old devices, so that
// the application's own history ends where the move found it.
func (m *model) Tail(site string, pod Pod) (*ramen.Tail, error) {
	tail, err := newModel(m.platform, m.spec, TailName(m.spec.Name))
	if err != nil {
		return nil, fmt.Errorf("%s's tail: %w", m.spec.Name, err)
	}
	return &ramen.Tail{Model: tail, Site: site, Devices: pod.Devices(), Stop: pod.Stop}, nil
}
