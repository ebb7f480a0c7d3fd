package apps

import (
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/workload"
)

// Platform is what a bed provides for the applications to run on it. Its
// methods are called from the bed's one driving goroutine.
type Platform interface {
	// Now is the bed's time: simulated, or the wall clock.
	Now() time.Time
	// Until lets the bed's time pass -- the applications step, the Ramen
	// driver runs its rounds -- until done holds or limit passed; it reports
	// whether done held.
	Until(done func() bool, limit time.Duration) bool
	// Rand is the random source of a new workload model named name (an
	// application, or its tail "<name>~tail"): seeded, so a run replays.
	Rand(name string) *rand.Rand

	// CreateVolume creates one of app's volumes through site's CSI
	// controller and returns its handle.
	CreateVolume(site, app string, volume workload.VolumeSpec) (handle string, err error)
	// StartPod starts app's pod on site: its volumes staged and published on
	// one of the site's nodes through the CSI node service -- retrying while
	// the driver says the device is not there yet, as the kubelet does --
	// and their devices open. An error when that could not be done within
	// the bed's limit.
	StartPod(site, app string, volumes []Volume) (Pod, error)
	// OriginTakenAt is when the snapshot the active end of handle's chain
	// was cloned from was ordered on its predecessor's site: the recovery
	// point of the fail-over that made the end.
	OriginTakenAt(handle string) (time.Time, error)

	// Event puts an entry on the bed's timeline; Violate records a broken
	// invariant. At renders a time as the bed's reports do.
	Event(site string, kind reports.EventKind, format string, args ...any)
	Violate(invariant, message string)
	At(t time.Time) string
	// Wrote counts an acknowledged operation of app on site, for the
	// timeline (a bed enters them in batches).
	Wrote(app, site string)
	// WriteFailed handles a write a running application's device refused.
	// Nothing in the DR machinery may fence the primary: a bed whose pools
	// cannot fill records a violation; one whose can stops the application
	// on a full pool and restarts it later.
	WriteFailed(a *App, err error)
}

// Pod is an application's pod where a Platform started it.
type Pod interface {
	// Node is the node the pod runs on; "" while it does not run (its node
	// went down and the bed has not started it elsewhere yet).
	Node() string
	// Running reports whether the pod runs and its application can write.
	Running() bool
	// Devices are the application's open volumes by name; nil while the
	// pod does not run, and for an application that opens its volumes
	// itself.
	Devices() workload.Devices
	// Stop deletes the pod: its devices close, its volumes are unpublished
	// and unstaged.
	Stop() error
}

// Claims is a Platform whose applications hold their volumes through
// claims, as Ramen's VolumeReplicationGroup handles them: Retain keeps a's
// volumes on site when their claims go (before protection: the data is the
// chain's from then on), Restore makes a's claims on site, bound to the
// volumes' handles (before a move makes the site's VolumeReplications, which
// name the claims).
type Claims interface {
	Retain(a *App, site string) error
	Restore(a *App, site string) error
}

// Volume is one of an application's volumes.
type Volume struct {
	// Name is the workload's name of the volume ("db").
	Name string
	// Handle is the CSI volume handle: the chain's root, kept for ever.
	Handle    string
	SizeBytes uint64
	// Files: the application keeps files on it (workload.VolumeSpec.Files).
	Files bool
}

// CloseDevices closes every device, in name order.
func CloseDevices(devices workload.Devices) {
	for _, name := range slices.Sorted(maps.Keys(devices)) {
		devices[name].Close()
	}
}
