package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// Timings of the applications and of the DR machinery around them.
const (
	// stepPeriod is how often an application performs one operation.
	stepPeriod = time.Second
	// vrPeriod is how often each site's csi-addons controller looks at its
	// VolumeReplications (each VR also says when it wants to be called again).
	vrPeriod = 5 * time.Second
	// actionLimit bounds a DR action: past it the action failed (liveness).
	actionLimit = 30 * time.Minute
	// placeCount of the applications' volumes.
	placeCount = 2
)

// app is one application: its workload model, its volumes, where its pod runs,
// and the VolumeReplications each site keeps for it.
type app struct {
	spec    bed.App
	model   workload.Workload
	volumes []appVolume
	site    string // where the application runs; "" while it is stopped
	node    *Node
	devices workload.Devices
	// ramen is the application as the hub protects it: its wishes, each
	// site's VolumeReplications, the tail left writing after a fail-over.
	ramen *ramen.App
	// datasets are the pool volumes of the members the pod attached, in
	// volume order: what it writes while it runs.
	datasets []string
	// restartAt is when the pod starts the application again after a write
	// failed on a full pool; zero while it runs.
	restartAt time.Time
	// evicted is the pod lost with its node and not running elsewhere yet.
	evicted *eviction
}

type appVolume struct {
	name   string // the workload's volume name ("db")
	handle string // the CSI volume handle: the chain's root, kept for ever
	size   uint64
}

func (w *World) newModel(spec bed.App, name string) (workload.Workload, error) {
	rng := w.Sim.Rand("app/" + name)
	return spec.Kind.Model(name, rng)
}

// Deploy creates the application's volumes through its site's CSI controller
// and starts its pod on the site's first node.
func (w *World) Deploy(spec bed.App) error {
	if _, exists := w.apps[spec.Name]; exists {
		return fmt.Errorf("application %q is deployed already", spec.Name)
	}
	model, err := w.newModel(spec, spec.Name)
	if err != nil {
		return err
	}
	a := &app{spec: spec, model: model}
	s := w.Site(spec.Site)
	for _, v := range model.Volumes() {
		resp, err := s.CSIController.CreateVolume(context.Background(), &csispec.CreateVolumeRequest{
			Name:               spec.Name + "-" + v.Name,
			CapacityRange:      &csispec.CapacityRange{RequiredBytes: int64(v.SizeBytes)},
			VolumeCapabilities: []*csispec.VolumeCapability{blockCapability()},
			Parameters:         map[string]string{"placeCount": strconv.Itoa(placeCount)},
		})
		if err != nil {
			return fmt.Errorf("create volume %s: %w", v.Name, err)
		}
		a.volumes = append(a.volumes, appVolume{name: v.Name, handle: resp.GetVolume().GetVolumeId(), size: v.SizeBytes})
	}
	a.ramen = w.ramen.Add(spec.Name, handles(a.volumes))
	w.apps[spec.Name] = a
	w.appOrder = append(w.appOrder, spec.Name)
	w.event(spec.Site, reports.EventAction, "deploy %s", spec.Name)
	return w.start(a, s)
}

func blockCapability() *csispec.VolumeCapability {
	return &csispec.VolumeCapability{
		AccessType: &csispec.VolumeCapability_Block{Block: &csispec.VolumeCapability_BlockVolume{}},
		AccessMode: &csispec.VolumeCapability_AccessMode{Mode: csispec.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// start schedules the application's pod on the site's first node that is
// up: stage and publish every volume (the kubelet retrying while the device
// is not ready), open the devices, and let the application write.
func (w *World) start(a *app, s *Site) error {
	n := w.upNode(s.Name, nil)
	if n == nil {
		return fmt.Errorf("start %s on %s: no node is up", a.spec.Name, s.Name)
	}
	devices, err := w.stage(n, a.volumes)
	if err != nil {
		return err
	}
	a.site, a.node, a.devices = s.Name, n, devices
	a.datasets = w.datasetsOf(n, a.volumes)
	return nil
}

// stage stages and publishes volumes on a node and opens their devices,
// retrying while the driver answers Unavailable, as the kubelet does.
func (w *World) stage(n *Node, volumes []appVolume) (workload.Devices, error) {
	devices := workload.Devices{}
	for _, v := range volumes {
		var lastErr error
		staged := w.RunUntil(func() bool {
			lastErr = w.stageOne(n, v)
			return lastErr == nil
		}, 5*time.Minute)
		if !staged {
			closeAll(devices)
			return nil, fmt.Errorf("stage %s on %s: %w", v.name, n.Endpoint, lastErr)
		}
		ref, err := w.attachedMember(n, v.handle)
		if err != nil {
			closeAll(devices)
			return nil, err
		}
		d, err := n.open("vol-" + string(ref))
		if err != nil {
			closeAll(devices)
			return nil, fmt.Errorf("open %s on %s: %w", v.name, n.Endpoint, err)
		}
		devices[v.name] = d
	}
	return devices, nil
}

func (w *World) stageOne(n *Node, v appVolume) error {
	ctx := context.Background()
	staging := "/var/lib/kubelet/plugins/baton/staging/" + v.handle
	if _, err := n.CSI.NodeStageVolume(ctx, &csispec.NodeStageVolumeRequest{VolumeId: v.handle,
		StagingTargetPath: staging, VolumeCapability: blockCapability()}); err != nil {
		return err
	}
	_, err := n.CSI.NodePublishVolume(ctx, &csispec.NodePublishVolumeRequest{VolumeId: v.handle,
		StagingTargetPath: staging, TargetPath: "/var/lib/kubelet/pods/app/volumes/" + v.handle,
		VolumeCapability: blockCapability()})
	return err
}

// attachedMember finds which member of the handle's chain the node staged:
// the one whose primary it is.
func (w *World) attachedMember(n *Node, handle string) (string, error) {
	defer w.unfaulted()()
	volumes, err := n.site.Store.Volumes()
	if err != nil {
		return "", err
	}
	for _, v := range volumes {
		if v.Root.String() == handle && v.Primary == n.Name {
			return string(v.Ref.Volume), nil
		}
	}
	return "", fmt.Errorf("no member of %s has its primary on %s", handle, n.Endpoint)
}

// stop deletes the application's pod where it runs: its writes end, its
// devices close, its volumes are unpublished and unstaged.
func (w *World) stop(a *app) {
	if a.site == "" {
		return
	}
	if a.node != nil {
		closeAll(a.devices)
		w.unstage(a.node, a.volumes)
	}
	a.site, a.node, a.devices, a.evicted, a.restartAt = "", nil, nil, nil, time.Time{}
}

func (w *World) unstage(n *Node, volumes []appVolume) {
	ctx := context.Background()
	for _, v := range volumes {
		staging := "/var/lib/kubelet/plugins/baton/staging/" + v.handle
		n.CSI.NodeUnpublishVolume(ctx, &csispec.NodeUnpublishVolumeRequest{VolumeId: v.handle,
			TargetPath: "/var/lib/kubelet/pods/app/volumes/" + v.handle})
		n.CSI.NodeUnstageVolume(ctx, &csispec.NodeUnstageVolumeRequest{VolumeId: v.handle, StagingTargetPath: staging})
	}
}

func closeAll(devices workload.Devices) {
	names := make([]string, 0, len(devices))
	for name := range devices {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		devices[name].Close()
	}
}

// step is one operation of every running application (and of every tail).
func (w *World) step() {
	w.loseCrashedPods()
	w.reschedule()
	w.checkPrimariesWritable()
	for _, name := range w.appOrder {
		a := w.apps[name]
		if a.running() && !a.restartAt.IsZero() && !w.Sim.Now().Before(a.restartAt) {
			w.restart(a)
		}
		if a.running() {
			res, err := a.model.Step(w.Sim.Now(), a.devices)
			switch {
			case err == nil && res.Acknowledged:
				w.writes[a.site]++
			case err != nil && !errors.Is(err, workload.ErrStopped):
				// The application runs where the hub made it primary: nothing
				// in the DR machinery may fence it there.
				w.refusedWrite(a, err)
			}
		}
		if t := a.ramen.Tail; t != nil && t.Step(w.Sim.Now()) {
			w.writes[t.Site]++
		}
	}
}

// Protect asks the application's site for Primary VolumeReplications and
// waits until every volume shipped a first snapshot.
func (w *World) Protect(name string) error {
	a, err := w.app(name)
	if err != nil {
		return err
	}
	return w.ramen.Protect(a.ramen, a.site)
}

// reconcileVRs is a round of the hub and every site's csi-addons
// controller: a controller that is down calls nothing.
func (w *World) reconcileVRs() {
	now := w.Sim.Now()
	w.ramen.Round(now, func(site string, vr *ramen.VR) {
		if s := w.Site(site); s.ControllerUp {
			var next time.Duration
			took := w.Timed(func() { next = vr.Reconcile(context.Background(), s.CSIReplication) })
			vr.Due = now.Add(took + next)
		}
	})
}

// hubReaches tells whether the hub and the site reach each other.
func (w *World) hubReaches(site string) bool {
	return w.Net.Reachable(hubEndpoint, site) && w.Net.Reachable(site, hubEndpoint)
}

func handles(volumes []appVolume) []string {
	out := make([]string, len(volumes))
	for i, v := range volumes {
		out[i] = v.handle
	}
	return out
}

func (w *World) app(name string) (*app, error) {
	a, ok := w.apps[name]
	if !ok {
		return nil, fmt.Errorf("no application %q", name)
	}
	return a, nil
}

// Where tells on which site the application runs.
func (w *World) Where(name string) (string, error) {
	a, err := w.app(name)
	if err != nil {
		return "", err
	}
	if a.site == "" {
		return "", fmt.Errorf("application %q is not running", name)
	}
	return a.site, nil
}

// Pod tells on which node the application's pod runs.
func (w *World) Pod(name string) (string, error) {
	a, err := w.app(name)
	if err != nil {
		return "", err
	}
	if a.node == nil {
		return "", fmt.Errorf("application %q is not running", name)
	}
	return a.node.Name, nil
}

// Nodes lists a site's storage nodes.
func (w *World) Nodes(site string) []string {
	var out []string
	for _, n := range w.Site(site).Nodes {
		out = append(out, n.Name)
	}
	return out
}

// Verify reads the application's volumes where it runs.
func (w *World) Verify(name string) (workload.Verdict, error) {
	a, err := w.app(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	if a.site == "" {
		return workload.Verdict{}, fmt.Errorf("application %q is not running", name)
	}
	if err := w.awaitPod(a); err != nil {
		return workload.Verdict{}, err
	}
	return a.model.Verify(a.devices, w.Sim.Now()), nil
}
