package local

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/ramen"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/workload"
)

// stepPeriod is how often, in a scenario's time, an application performs
// one operation (the wall period is stepPeriod / TimeScale).
const stepPeriod = time.Second

// app is one application: its workload model, its volumes, where its pod
// runs, and the VolumeReplications each site keeps for it.
type app struct {
	spec    bed.App
	model   workload.Workload
	volumes []appVolume
	site    string // where the application runs; "" while it is stopped
	devices workload.Devices
	// ramen is the application as the hub protects it: its wishes, each
	// site's VolumeReplications, the tail left writing after a fail-over.
	ramen *ramen.App
	// writes counts acknowledged operations per site since the last
	// timeline entry.
	writes map[string]int
}

type appVolume struct {
	name   string // the workload's volume name ("db")
	handle string // the CSI volume handle: the chain's root, kept for ever
	size   uint64
}

func (b *Bed) newModel(spec bed.App, name string) (workload.Workload, error) {
	rng := rand.New(rand.NewPCG(b.options.Seed, uint64(len(name))<<32|uint64(len(b.appOrder))))
	return spec.Kind.Model(name, rng)
}

func blockCapability() *csispec.VolumeCapability {
	return &csispec.VolumeCapability{
		AccessType: &csispec.VolumeCapability_Block{Block: &csispec.VolumeCapability_BlockVolume{}},
		AccessMode: &csispec.VolumeCapability_AccessMode{Mode: csispec.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// Deploy creates the application's volumes through its site's CSI
// controller (block volumes, one replica: btrfs) and starts it there.
func (b *Bed) Deploy(spec bed.App) error {
	if _, exists := b.apps[spec.Name]; exists {
		return fmt.Errorf("application %q is deployed already", spec.Name)
	}
	s, err := b.site(spec.Site)
	if err != nil {
		return err
	}
	model, err := b.newModel(spec, spec.Name)
	if err != nil {
		return err
	}
	a := &app{spec: spec, model: model, writes: map[string]int{}}
	for _, v := range model.Volumes() {
		ctx, cancel := context.WithTimeout(context.Background(), b.options.ActionLimit)
		resp, err := s.csiController.CreateVolume(ctx, &csispec.CreateVolumeRequest{
			Name:               spec.Name + "-" + v.Name,
			CapacityRange:      &csispec.CapacityRange{RequiredBytes: int64(v.SizeBytes)},
			VolumeCapabilities: []*csispec.VolumeCapability{blockCapability()},
			Parameters:         map[string]string{"placeCount": "1"},
		})
		cancel()
		if err != nil {
			return fmt.Errorf("create volume %s on %s: %w", v.Name, s.name, err)
		}
		a.volumes = append(a.volumes, appVolume{name: v.Name, handle: resp.GetVolume().GetVolumeId(), size: v.SizeBytes})
	}
	handles := make([]string, len(a.volumes))
	for i, v := range a.volumes {
		handles[i] = v.handle
	}
	a.ramen = b.ramen.Add(spec.Name, handles)
	b.apps[spec.Name] = a
	b.appOrder = append(b.appOrder, spec.Name)
	b.event(spec.Site, reports.EventAction, "deploy %s", spec.Name)
	devices, err := b.stage(s, a.spec.Name, a.volumes)
	if err != nil {
		return err
	}
	a.site, a.devices = s.name, devices
	return nil
}

func (s *site) stagingPath(pod string, v appVolume) string {
	return filepath.Join(s.dir, "kubelet", "staging", pod, v.name)
}

func (s *site) targetPath(pod string, v appVolume) string {
	return filepath.Join(s.dir, "kubelet", "pods", pod, v.name)
}

// stage stages and publishes the volumes on the site's node, as the kubelet
// does (retrying while the driver says the device is not there yet), and
// opens the published block devices.
func (b *Bed) stage(s *site, pod string, volumes []appVolume) (workload.Devices, error) {
	devices := workload.Devices{}
	for _, v := range volumes {
		var last error
		if !b.pump(func() bool {
			last = s.stageOne(pod, v)
			return last == nil
		}, b.options.ActionLimit) {
			closeAll(devices)
			return nil, fmt.Errorf("stage %s on %s: %w", v.name, s.name, last)
		}
		f, err := os.OpenFile(s.targetPath(pod, v), os.O_RDWR, 0)
		if err != nil {
			closeAll(devices)
			return nil, fmt.Errorf("open %s on %s: %w", v.name, s.name, err)
		}
		devices[v.name] = blockDevice{f}
	}
	return devices, nil
}

func (s *site) stageOne(pod string, v appVolume) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	staging := s.stagingPath(pod, v)
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return err
	}
	if _, err := s.csiNode.NodeStageVolume(ctx, &csispec.NodeStageVolumeRequest{VolumeId: v.handle,
		StagingTargetPath: staging, VolumeCapability: blockCapability()}); err != nil {
		return err
	}
	target := s.targetPath(pod, v)
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return err
	}
	_, err := s.csiNode.NodePublishVolume(ctx, &csispec.NodePublishVolumeRequest{VolumeId: v.handle,
		StagingTargetPath: staging, TargetPath: target, VolumeCapability: blockCapability()})
	return err
}

// unstage unpublishes and unstages the volumes; the devices are closed
// already.
func (s *site) unstage(pod string, volumes []appVolume) error {
	var errs []error
	for _, v := range volumes {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := s.csiNode.NodeUnpublishVolume(ctx, &csispec.NodeUnpublishVolumeRequest{VolumeId: v.handle,
			TargetPath: s.targetPath(pod, v)}); err != nil {
			errs = append(errs, fmt.Errorf("unpublish %s on %s: %w", v.name, s.name, err))
		}
		if _, err := s.csiNode.NodeUnstageVolume(ctx, &csispec.NodeUnstageVolumeRequest{VolumeId: v.handle,
			StagingTargetPath: s.stagingPath(pod, v)}); err != nil {
			errs = append(errs, fmt.Errorf("unstage %s on %s: %w", v.name, s.name, err))
		}
		cancel()
	}
	return errors.Join(errs...)
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

// stop deletes the application's pod where it runs (and the tail's, if one
// still writes): devices closed, volumes unpublished and unstaged.
func (b *Bed) stop(a *app) error {
	var errs []error
	if t := a.ramen.Tail; t != nil {
		errs = append(errs, t.Stop())
		a.ramen.Tail = nil
	}
	if a.site == "" {
		return errors.Join(errs...)
	}
	closeAll(a.devices)
	s, err := b.site(a.site)
	if err != nil {
		return err
	}
	errs = append(errs, s.unstage(a.spec.Name, a.volumes))
	a.site, a.devices = "", nil
	return errors.Join(errs...)
}

// step is one operation of every running application and of every tail.
func (b *Bed) step() {
	now := time.Now()
	for _, name := range b.appOrder {
		a := b.apps[name]
		if a.site != "" {
			res, err := a.model.Step(now, a.devices)
			switch {
			case err == nil && res.Acknowledged:
				a.writes[a.site]++
			case err != nil && !errors.Is(err, workload.ErrStopped):
				// The application runs where the hub made it primary: nothing
				// in the DR machinery may fence it there.
				b.violate("application: the primary refused a write", fmt.Sprintf("%s on %s: %v", a.spec.Name, a.site, err))
			}
		}
		if t := a.ramen.Tail; t != nil && t.Step(now) {
			a.writes[t.Site]++
		}
	}
}

// Protect asks the application's site for Primary VolumeReplications and
// waits until every volume shipped a first snapshot.
func (b *Bed) Protect(name string) error {
	a, err := b.app(name)
	if err != nil {
		return err
	}
	if a.site == "" {
		return fmt.Errorf("protect %s: it is not running", name)
	}
	return b.ramen.Protect(a.ramen, a.site)
}

// Relocate is Ramen's planned relocation: the application stops and its
// volumes are unstaged, the old site turns secondary and resyncs until its
// data is protected, then the target site is promoted and the application
// starts there.
func (b *Bed) Relocate(name, to string) (workload.Verdict, error) {
	a, err := b.app(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	from := a.site
	switch {
	case from == "":
		return workload.Verdict{}, fmt.Errorf("relocate %s: it is not running", name)
	case from == to:
		return workload.Verdict{}, fmt.Errorf("relocate %s: it runs on %s already", name, to)
	}
	if _, err := b.site(to); err != nil {
		return workload.Verdict{}, err
	}
	b.event(from, reports.EventAction, "relocate %s from %s to %s", name, from, to)
	if err := b.stop(a); err != nil {
		return workload.Verdict{}, err
	}
	if err := b.ramen.Relocate(a.ramen, from, to); err != nil {
		return workload.Verdict{}, err
	}
	return b.land(a, to, true)
}

// Failover is Ramen's unplanned fail-over: the hub makes the target site
// primary (Promote, forced on FailedPrecondition) and the old site secondary
// with autoResync -- delivered only when the hub reaches it again. Until
// then the application left running on the old site keeps writing: the
// diverged tail.
func (b *Bed) Failover(name, to string) (workload.Verdict, error) {
	a, err := b.app(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	if _, err := b.site(to); err != nil {
		return workload.Verdict{}, err
	}
	from := a.site
	b.event(to, reports.EventAction, "fail over %s from %s to %s", name, from, to)
	var tail *ramen.Tail
	if from != "" && from != to {
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
			closeAll(devices)
			return old.unstage(a.spec.Name, a.volumes)
		}}
		a.site, a.devices = "", nil
	}
	if err := b.ramen.Failover(a.ramen, from, to, tail); err != nil {
		return workload.Verdict{}, err
	}
	return b.land(a, to, false)
}

// land starts the application on site and verifies what it finds there
// before it writes anything: the move's verdict. The application then
// continues from what survived.
func (b *Bed) land(a *app, site string, planned bool) (workload.Verdict, error) {
	start := time.Now()
	s, err := b.site(site)
	if err != nil {
		return workload.Verdict{}, err
	}
	devices, err := b.stage(s, a.spec.Name, a.volumes)
	if err != nil {
		return workload.Verdict{}, err
	}
	a.site, a.devices = site, devices
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

// Pod tells on which node the application's pod runs: each site has one.
func (b *Bed) Pod(name string) (string, error) {
	if _, err := b.Where(name); err != nil {
		return "", err
	}
	return nodeName, nil
}

func (b *Bed) app(name string) (*app, error) {
	a, ok := b.apps[name]
	if !ok {
		return nil, fmt.Errorf("no application %q", name)
	}
	return a, nil
}

// checkLoss holds the volume invariant of a move (bed.MoveLosses); the
// recovery point is when the site ordered the snapshot, on the host clock
// the writes are acknowledged by.
func (b *Bed) checkLoss(a *app, verdict workload.Verdict, planned bool) {
	origin := func(i int) (time.Time, error) { return b.originTakenAt(a.volumes[i].handle) }
	at := func(t time.Time) string { return t.Format(time.RFC3339Nano) }
	broken, unchecked := bed.MoveLosses(a.spec.Name, verdict, planned, origin, at)
	for _, err := range unchecked {
		b.event("", reports.EventAction, "%v", err)
	}
	for _, v := range broken {
		b.violate(v.Invariant, v.Message)
	}
}

// originTakenAt finds when the snapshot the chain's active end was cloned
// from was taken on its predecessor's site, from the sites' records.
func (b *Bed) originTakenAt(handle string) (time.Time, error) {
	root, err := chain.ParseRef(handle)
	if err != nil {
		return time.Time{}, err
	}
	volumes := map[chain.Ref]core.Volume{}
	for _, s := range b.sites {
		vs, err := s.store.Volumes()
		if err != nil {
			return time.Time{}, err
		}
		for _, v := range vs {
			if v.Root == root {
				volumes[v.Ref] = v
			}
		}
	}
	var end core.Volume
	for _, v := range volumes {
		if v.Successor.IsZero() && v.State == chain.Active {
			end = v
		}
	}
	if end.Origin.GUID == "" {
		return time.Time{}, fmt.Errorf("the active end of %s records no origin snapshot", handle)
	}
	for _, s := range b.sites {
		pairings, err := s.store.Pairings()
		if err != nil {
			return time.Time{}, err
		}
		for _, p := range pairings {
			if p.Source != end.Predecessor {
				continue
			}
			for _, sn := range p.Snapshots {
				if sn.GUID == end.Origin.GUID {
					return sn.TakenAt, nil
				}
			}
		}
	}
	return time.Time{}, fmt.Errorf("no pairing of %s still lists snapshot %s", end.Predecessor, end.Origin.Snapshot)
}
