package sim

import (
	"errors"
	"slices"
	"time"

	"github.com/baton-dr/baton/bed"
	"github.com/baton-dr/baton/scenarios/workload"
)

var _ bed.Bed = (*World)(nil)

// Name is the bed's name.
func (w *World) Name() string { return "sim" }

// Sites are the bed's two sites.
func (w *World) Sites() []string { return slices.Clone(SiteNames) }

// Now is simulated time.
func (w *World) Now() time.Time { return w.Sim.Now() }

// ErrNoDrill: the simulation cannot run test fail-overs yet.
var ErrNoDrill = errors.New("the simulation bed does not run test fail-overs yet")

// Drill runs a test fail-over on site.
func (w *World) Drill(app, site string) (workload.Verdict, error) {
	return workload.Verdict{}, ErrNoDrill
}
