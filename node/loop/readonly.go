package loop

import (
	"os"

	"golang.org/x/sys/unix"
)

// SetReadOnly sets or clears a block device's read-only flag (BLKROSET, what
// `blockdev --setro` does). The kernel checks the flag on every write, so it
// fences descriptors opened before it was set: their writes fail with EPERM.
func SetReadOnly(device *os.File, readOnly bool) error {
	value := 0
	if readOnly {
		value = 1
	}
	if err := unix.IoctlSetPointerInt(int(device.Fd()), unix.BLKROSET, value); err != nil {
		return &os.PathError{Op: "ioctl BLKROSET", Path: device.Name(), Err: err}
	}
	return nil
}
