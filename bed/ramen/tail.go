package ramen

import (
	"time"

	"github.com/baton-dr/baton/workload"
)

// Tail is the application instance left running on the old site after an
// unplanned fail-over, for as long as the hub cannot reach that site to
// delete its pod: it keeps writing through the old devices, the diverged
// tail. A second model writes it, so that the application's own history
// ends where the fail-over found it -- or, for an application run as
// itself, a second client of its own (Model nil: the tail writes on its
// own, and Step does nothing).
type Tail struct {
	Model   workload.Workload
	Site    string
	Devices workload.Devices
	// Stop deletes the pod: it closes the devices and unpublishes and
	// unstages the volumes, as the bed's kubelet does.
	Stop func() error
}

// Step is one operation of the tail; it reports whether the write was
// acknowledged. The old primary may refuse writes once it is fenced: that
// is what fencing is for, not a fault.
func (t *Tail) Step(now time.Time) bool {
	if t.Model == nil {
		return false
	}
	res, err := t.Model.Step(now, t.Devices)
	return err == nil && res.Acknowledged
}
