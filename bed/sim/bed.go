package sim

import (
	"context"
	"fmt"
	"slices"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/bed/apps"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/workload"
)

// The simulation offers every capability a bed may.
var (
	_ bed.Bed               = (*World)(nil)
	_ bed.Driller           = (*World)(nil)
	_ bed.StorageHub        = (*World)(nil)
	_ bed.LinkDegrader      = (*World)(nil)
	_ bed.NodeCrasher       = (*World)(nil)
	_ bed.ControllerCrasher = (*World)(nil)
	_ bed.PoolFiller        = (*World)(nil)
	_ bed.APIFailer         = (*World)(nil)
	_ bed.StoreFailer       = (*World)(nil)
	_ bed.Paced             = (*World)(nil)
)

// Name is the bed's name.
func (w *World) Name() string { return "sim" }

// Sites are the bed's two sites.
func (w *World) Sites() []string { return slices.Clone(SiteNames) }

// ReplicationInterval is the sites' snapshot interval.
func (w *World) ReplicationInterval() (time.Duration, error) {
	return w.options.ReplicationInterval, nil
}

// Now is simulated time.
func (w *World) Now() time.Time { return w.Sim.Now() }

// Drill runs a test fail-over on site as the TestFailover reconciler does:
// each volume's newest replica snapshot is cloned into a bubble outside the
// chain, the application's data is verified in the bubbles (a prefix of its
// writes, the newest ones missing: the RPO a fail-over would cost now), and
// the bubbles are deleted -- replication is never touched.
func (w *World) Drill(name, on string) (workload.Verdict, error) {
	a, err := w.apps.App(name)
	if err != nil {
		return workload.Verdict{}, err
	}
	s := w.Site(on)
	w.event(on, reports.EventAction, "drill %s on %s", name, on)
	var bubbles []apps.Volume
	var node *Node
	for _, v := range a.Volumes {
		root, err := chain.ParseRef(v.Handle)
		if err != nil {
			return workload.Verdict{}, err
		}
		bubble, err := s.Control.Drill(core.DrillRequest{Name: "drill-" + name + "-" + v.Name, Root: root})
		if err != nil {
			return workload.Verdict{}, fmt.Errorf("drill %s on %s: %w", v.Name, on, err)
		}
		bubbles = append(bubbles, apps.Volume{Name: v.Name, Handle: bubble.Ref.String(), SizeBytes: v.SizeBytes})
		if node == nil {
			node = s.Node(bubble.Primary)
		}
	}
	devices, err := w.stage(node, bubbles, true)
	if err != nil {
		return workload.Verdict{}, err
	}
	verdict := a.Model.Verify(devices, w.Sim.Now())
	apps.CloseDevices(devices)
	w.unstage(node, bubbles)
	for _, b := range bubbles {
		if _, err := s.CSIController.DeleteVolume(context.Background(), &csispec.DeleteVolumeRequest{VolumeId: b.Handle}); err != nil {
			return verdict, fmt.Errorf("drill cleanup of %s: %w", b.Handle, err)
		}
	}
	w.event(on, reports.EventAction, "drill %s on %s: %d acknowledged writes behind, RPO %s", name, on,
		verdict.LostAcknowledged(), worstRPO(verdict))
	return verdict, nil
}

func worstRPO(v workload.Verdict) time.Duration {
	var worst time.Duration
	for _, vol := range v.Volumes {
		worst = max(worst, vol.Lost.RPO)
	}
	return worst
}
