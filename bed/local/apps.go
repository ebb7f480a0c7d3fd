package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// stepPeriod is how often, in a scenario's time, an application performs
// one operation (the wall period is stepPeriod / TimeScale).
const stepPeriod = time.Second

// The applications run on the local bed through bed/apps; platform is what
// the bed provides them, pod an application's pod on a site's node.

// platform is the local bed as bed/apps' Platform.
type platform struct {
	bed.WallClock
	b *Bed
}

// platform makes the bed's Platform; its clock and its models' seeds
// are bed.WallClock's.
func (b *Bed) platform() platform {
	return platform{bed.WallClock{Seed: b.options.Seed, Deployed: func() int { return len(b.apps.All()) }}, b}
}

var _ apps.Platform = platform{}

func (p platform) Until(done func() bool, limit time.Duration) bool { return p.b.pump(done, limit) }

func (p platform) Event(site string, kind reports.EventKind, format string, args ...any) {
	p.b.event(site, kind, format, args...)
}

func (p platform) Violate(invariant, message string) { p.b.violate(invariant, message) }

func (p platform) Wrote(app, site string) {
	if p.b.writes[app] == nil {
		p.b.writes[app] = map[string]int{}
	}
	p.b.writes[app][site]++
}

// WriteFailed is a violation: the local bed fills no pool, so nothing may
// refuse the primary's writes.
func (p platform) WriteFailed(a *apps.App, err error) {
	p.b.violate("application: the primary refused a write", fmt.Sprintf("%s on %s: %v", a.Spec.Name, a.Site, err))
}

// CreateVolume creates a block volume, named APP-VOLUME, through the site's CSI controller,
// one replica (btrfs).
func (p platform) CreateVolume(site, app string, volume workload.VolumeSpec) (string, error) {
	s, err := p.b.site(site)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.b.options.ActionLimit)
	defer cancel()
	resp, err := s.csiController.CreateVolume(ctx, &csispec.CreateVolumeRequest{
		Name:               app + "-" + volume.Name,
		CapacityRange:      &csispec.CapacityRange{RequiredBytes: int64(volume.SizeBytes)},
		VolumeCapabilities: []*csispec.VolumeCapability{blockCapability()},
		Parameters:         map[string]string{"placeCount": "1"},
	})
	return resp.GetVolume().GetVolumeId(), err
}

// StartPod stages and publishes the volumes on the site's node, as the
// kubelet does (retrying while the driver says the device is not there
// yet), and opens the published block devices.
func (p platform) StartPod(site, app string, volumes []apps.Volume) (apps.Pod, error) {
	s, err := p.b.site(site)
	if err != nil {
		return nil, err
	}
	pod := &pod{site: s, name: app, volumes: volumes, devices: workload.Devices{}}
	for _, v := range volumes {
		var last error
		if !p.b.pump(func() bool {
			last = pod.stageOne(v)
			return last == nil
		}, p.b.options.ActionLimit) {
			apps.CloseDevices(pod.devices)
			return nil, fmt.Errorf("stage %s on %s: %w", v.Name, s.name, last)
		}
		f, err := os.OpenFile(pod.targetPath(v), os.O_RDWR, 0)
		if err != nil {
			apps.CloseDevices(pod.devices)
			return nil, fmt.Errorf("open %s on %s: %w", v.Name, s.name, err)
		}
		pod.devices[v.Name] = blockDevice{f}
	}
	return pod, nil
}

// pod is an application's pod on a site's one node.
type pod struct {
	site    *site
	name    string
	volumes []apps.Volume
	devices workload.Devices
}

func (p *pod) Node() string              { return nodeName }
func (p *pod) Devices() workload.Devices { return p.devices }

func (p *pod) Running() bool { return p.devices != nil }

func (p *pod) stagingPath(v apps.Volume) string {
	return filepath.Join(p.site.dir, "kubelet", "staging", p.name, v.Name)
}

func (p *pod) targetPath(v apps.Volume) string {
	return filepath.Join(p.site.dir, "kubelet", "pods", p.name, v.Name)
}

func (p *pod) stageOne(v apps.Volume) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	staging := p.stagingPath(v)
	if err := os.MkdirAll(staging, 0o750); err != nil {
		return err
	}
	if _, err := p.site.csiNode.NodeStageVolume(ctx, &csispec.NodeStageVolumeRequest{VolumeId: v.Handle,
		StagingTargetPath: staging, VolumeCapability: blockCapability()}); err != nil {
		return err
	}
	target := p.targetPath(v)
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return err
	}
	_, err := p.site.csiNode.NodePublishVolume(ctx, &csispec.NodePublishVolumeRequest{VolumeId: v.Handle,
		StagingTargetPath: staging, TargetPath: target, VolumeCapability: blockCapability()})
	return err
}

// Stop closes the devices, then unpublishes and unstages the volumes.
func (p *pod) Stop() error {
	apps.CloseDevices(p.devices)
	var errs []error
	for _, v := range p.volumes {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := p.site.csiNode.NodeUnpublishVolume(ctx, &csispec.NodeUnpublishVolumeRequest{VolumeId: v.Handle,
			TargetPath: p.targetPath(v)}); err != nil {
			errs = append(errs, fmt.Errorf("unpublish %s on %s: %w", v.Name, p.site.name, err))
		}
		if _, err := p.site.csiNode.NodeUnstageVolume(ctx, &csispec.NodeUnstageVolumeRequest{VolumeId: v.Handle,
			StagingTargetPath: p.stagingPath(v)}); err != nil {
			errs = append(errs, fmt.Errorf("unstage %s on %s: %w", v.Name, p.site.name, err))
		}
		cancel()
	}
	return errors.Join(errs...)
}

func blockCapability() *csispec.VolumeCapability {
	return &csispec.VolumeCapability{
		AccessType: &csispec.VolumeCapability_Block{Block: &csispec.VolumeCapability_BlockVolume{}},
		AccessMode: &csispec.VolumeCapability_AccessMode{Mode: csispec.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

// OriginTakenAt finds when the snapshot the chain's active end was cloned
// from was ordered, from both sites' records (apps.OriginTakenAt).
func (p platform) OriginTakenAt(handle string) (time.Time, error) {
	sites := make([]apps.Records, 0, len(p.b.sites))
	for _, s := range p.b.sites {
		sites = append(sites, s.store)
	}
	return apps.OriginTakenAt(handle, sites...)
}
