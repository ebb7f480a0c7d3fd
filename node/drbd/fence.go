package drbd

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/baton-dr/baton/storage/backend"
)

var _ backend.DeviceFencer = (*Replicator)(nil)

// FenceDevice sets the fence on the resource's device, /dev/drbd<minor>
// (fenced), or lifts it (package fence): its read-only flag, and the
// shutdown of the file system mounted from it. On a Primary whose device is
// mounted, that stops every write before the demotion, which DRBD refuses
// while the device is open. A Secondary's device is fenced already: DRBD
// marks it read-only and refuses to open it (EMEDIUMTYPE), so nothing
// can be mounted from it or write through it; neither fencing nor lifting
// has anything to do there. The flag the fence set outlives the role: the
// agent lifts it once the device is Primary again.
func (r *Replicator) FenceDevice(resource string, fenced bool) error {
	resource, minor, err := r.upMinor(resource)
	if err != nil {
		return err
	}
	path := "/dev/drbd" + minor
	err = r.options.FenceDevice(path, fenced)
	switch {
	case err == nil, errors.Is(err, syscall.EMEDIUMTYPE):
		return nil
	case fenced:
		return fmt.Errorf("failed to fence %s (%s): %w", path, resource, err)
	}
	return fmt.Errorf("failed to lift the fence of %s (%s): %w", path, resource, err)
}
