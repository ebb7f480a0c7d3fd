package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/backend"
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
	// stageLimit bounds the kubelet's retries of one volume's staging.
	stageLimit = 5 * time.Minute
	// placeCount of the applications' volumes.
	placeCount = 2
)

// The applications run on the simulation through bed/apps; platform is what
// the simulation provides them, pod an application's pod on a node.

// platform is the simulation as bed/apps' Platform.
type platform struct{ w *World }

var _ apps.Platform = platform{}

func (p platform) Now() time.Time { return p.w.Sim.Now() }

func (p platform) Until(done func() bool, limit time.Duration) bool { return p.w.RunUntil(done, limit) }

func (p platform) Rand(name string) *rand.Rand { return p.w.Sim.Rand("app/" + name) }

func (p platform) Event(site string, kind reports.EventKind, format string, args ...any) {
	p.w.event(site, kind, format, args...)
}

func (p platform) Violate(invariant, message string) { p.w.violate(invariant, message) }

func (p platform) At(t time.Time) string { return p.w.offset(t) }

func (p platform) Wrote(_, site string) { p.w.writes[site]++ }

func (p platform) WriteFailed(a *apps.App, err error) { p.w.refusedWrite(a, err) }

// CreateVolume creates a volume, named APP-VOLUME, through the site's CSI
// controller, on placeCount nodes: a block volume, or with claims one of
// files on a filesystem (volumeRequest), bound to its claim (provision).
func (p platform) CreateVolume(site, app string, volume workload.VolumeSpec) (string, error) {
	resp, err := p.w.Site(site).CSIController.CreateVolume(context.Background(), p.w.createRequest(app, volume))
	if err != nil {
		return "", err
	}
	handle := resp.GetVolume().GetVolumeId()
	return handle, p.w.provision(site, app, volume, handle)
}

// createRequest is the CreateVolume the application's volume is made with.
func (w *World) createRequest(app string, volume workload.VolumeSpec) *csispec.CreateVolumeRequest {
	capability, size := w.volumeRequest(volume)
	return &csispec.CreateVolumeRequest{
		Name:               app + "-" + volume.Name,
		CapacityRange:      &csispec.CapacityRange{RequiredBytes: int64(size)},
		VolumeCapabilities: []*csispec.VolumeCapability{capability},
		Parameters:         map[string]string{"placeCount": strconv.Itoa(placeCount)},
	}
}

// StartPod schedules the application's pod on the site's first node that
// is up: stage and publish every volume (the kubelet retrying while the
// device is not ready), open the devices, and let the application write.
func (p platform) StartPod(site, app string, volumes []apps.Volume) (apps.Pod, error) {
	w := p.w
	n := w.upNode(site, nil)
	if n == nil {
		return nil, fmt.Errorf("start %s on %s: no node is up", app, site)
	}
	devices, err := w.stage(n, app, volumes, true)
	if err != nil {
		return nil, err
	}
	return w.podOn(n, volumes, devices), nil
}

// OriginTakenAt finds when the snapshot the chain's active end was cloned
// from was ordered, from both sites' records (apps.OriginTakenAt).
func (p platform) OriginTakenAt(handle string) (time.Time, error) {
	defer p.w.unfaulted()()
	sites := make([]apps.Records, 0, len(p.w.sites))
	for _, s := range p.w.sites {
		sites = append(sites, s.Store)
	}
	return apps.OriginTakenAt(handle, sites...)
}

// pod is an application's pod on a node of the simulation.
type pod struct {
	world   *World
	volumes []apps.Volume
	// node is where it runs; nil once its node went down, until the
	// scheduler started it elsewhere (evicted).
	node    *Node
	devices workload.Devices
	// datasets are the pool volumes of the members the pod attached, in
	// volume order: what it writes while it runs.
	datasets []string
	// restartAt is when the pod starts the application again after a write
	// failed on a full pool; zero while it runs.
	restartAt time.Time
	// evicted is the pod lost with its node and not running elsewhere yet.
	evicted *eviction
}

func (w *World) podOn(n *Node, volumes []apps.Volume, devices workload.Devices) *pod {
	return &pod{world: w, volumes: volumes, node: n, devices: devices, datasets: w.datasetsOf(n, volumes)}
}

func (p *pod) Node() string {
	if p.node == nil {
		return ""
	}
	return p.node.Name
}

func (p *pod) Devices() workload.Devices { return p.devices }

func (p *pod) Running() bool { return p.devices != nil }

// Stop closes the devices and unpublishes and unstages the volumes; a pod
// whose node went down has nothing left to stop.
func (p *pod) Stop() error {
	if p.node != nil {
		apps.CloseDevices(p.devices)
		p.world.unstage(p.node, p.volumes)
	}
	return nil
}

// podOf is the simulation's pod of a running or evicted application.
func podOf(a *apps.App) *pod {
	p, _ := a.Pod.(*pod)
	return p
}

func blockCapability() *csispec.VolumeCapability {
	return &csispec.VolumeCapability{
		AccessType: &csispec.VolumeCapability_Block{Block: &csispec.VolumeCapability_BlockVolume{}},
		AccessMode: &csispec.VolumeCapability_AccessMode{Mode: csispec.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// stage stages and publishes volumes on a node for a pod whose claims are
// in namespace, and opens their devices: with retry as the kubelet does,
// retrying each volume while the driver answers an error for up to
// stageLimit; without, one attempt.
func (w *World) stage(n *Node, namespace string, volumes []apps.Volume, retry bool) (workload.Devices, error) {
	devices := workload.Devices{}
	for _, v := range volumes {
		d, err := w.stageVolume(n, namespace, v, retry)
		if err != nil {
			apps.CloseDevices(devices)
			return nil, err
		}
		devices[v.Name] = d
	}
	return devices, nil
}

func (w *World) stageVolume(n *Node, namespace string, v apps.Volume, retry bool) (backend.Device, error) {
	if retry {
		var lastErr error
		if !w.RunUntil(func() bool {
			lastErr = w.stageOne(n, namespace, v)
			return lastErr == nil
		}, stageLimit) {
			return nil, fmt.Errorf("stage %s on %s: %w", v.Name, n.Endpoint, lastErr)
		}
	} else if err := w.stageOne(n, namespace, v); err != nil {
		return nil, err
	}
	ref, err := w.attachedMember(n, v.Handle)
	if err != nil {
		return nil, err
	}
	d, err := n.open("vol-" + ref)
	if err != nil {
		return nil, fmt.Errorf("open %s on %s: %w", v.Name, n.Endpoint, err)
	}
	if w.options.Claims && v.Files {
		return filesView{d}, nil
	}
	return d, nil
}

func (w *World) stageOne(n *Node, namespace string, v apps.Volume) error {
	capability, err := w.capability(n.site, namespace, v)
	if err != nil {
		return err
	}
	ctx := context.Background()
	staging := "/var/lib/kubelet/plugins/baton/staging/" + v.Handle
	if _, err := n.CSI.NodeStageVolume(ctx, &csispec.NodeStageVolumeRequest{VolumeId: v.Handle,
		StagingTargetPath: staging, VolumeCapability: capability}); err != nil {
		return err
	}
	_, err = n.CSI.NodePublishVolume(ctx, &csispec.NodePublishVolumeRequest{VolumeId: v.Handle,
		StagingTargetPath: staging, TargetPath: "/var/lib/kubelet/pods/app/volumes/" + v.Handle,
		VolumeCapability: capability})
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

func (w *World) unstage(n *Node, volumes []apps.Volume) {
	ctx := context.Background()
	for _, v := range volumes {
		staging := "/var/lib/kubelet/plugins/baton/staging/" + v.Handle
		n.CSI.NodeUnpublishVolume(ctx, &csispec.NodeUnpublishVolumeRequest{VolumeId: v.Handle,
			TargetPath: "/var/lib/kubelet/pods/app/volumes/" + v.Handle})
		n.CSI.NodeUnstageVolume(ctx, &csispec.NodeUnstageVolumeRequest{VolumeId: v.Handle, StagingTargetPath: staging})
	}
}

// step is one operation of every running application (and of every tail),
// once the pods that lost their node, moved or wait to restart had their
// turn.
func (w *World) step() {
	w.loseCrashedPods()
	w.reschedule()
	w.checkPrimariesWritable()
	for _, a := range w.apps.All() {
		if p := podOf(a); a.Running() && !p.restartAt.IsZero() && !w.Sim.Now().Before(p.restartAt) {
			w.restart(a)
		}
	}
	w.apps.Step()
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

// Nodes lists a site's storage nodes.
func (w *World) Nodes(site string) []string {
	var out []string
	for _, n := range w.Site(site).Nodes {
		out = append(out, n.Name)
	}
	return out
}
