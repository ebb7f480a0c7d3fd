package fence

import (
	"os"

	"golang.org/x/sys/unix"
)

// Path sets the fence on the block device at path (fenced) or lifts it: Fence
// or Lift on a descriptor opened read-only for the call. BLKROSET needs no
// write access, and a read-only open is what a device that already refuses
// writes still allows.
func Path(path string, fenced bool, ns Namespace) error {
	device, err := os.OpenFile(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer device.Close()
	if fenced {
		return Fence(device, ns)
	}
	return Lift(device, ns)
}
