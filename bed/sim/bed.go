package sim

import (
	"slices"
	"time"

	"github.com/baton-dr/baton/bed"
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
