package fence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/loop"
)

// The ways a fence fails closed. Each error wrapping one names the device,
// and the file system's type and mount point where there is one.
var (
	// ErrNoShutdown: a file system mounted read-write from the device has no
	// shutdown, and nothing else stops its writes short of unmounting it.
	ErrNoShutdown = errors.New("a file system mounted read-write from the device cannot be shut down")
	// ErrUnseenHolder: the device is held exclusively (mounted, or under a
	// stacked device) but no mount of it shows in the namespace.
	ErrUnseenHolder = errors.New("the device is held, but no mount of it shows in the node's mount namespace")
	// ErrStillShutDown: the fence is lifted, but a file system it shut down
	// is still mounted and fails every write until it is mounted again.
	ErrStillShutDown = errors.New("a file system the fence shut down is still mounted")
)

// Fence stops every write to the block device open as device: it sets the
// device's read-only flag, then shuts down the file system mounted
// read-write from it in the namespace. The flag comes first, so that a
// mount made after the look at the mounts is read-only (ext4 and xfs mount
// a read-only device read-only). Fencing a fenced device does nothing more.
func Fence(device *os.File, ns Namespace) error {
	rdev, mounts, err := setFlag(device, true, ns)
	if err != nil {
		return err
	}
	if len(mounts) == 0 {
		return checkNotHeld(device.Name(), rdev, ns)
	}
	return stop(device.Name(), rdev, mounts, ns)
}

// stop shuts down the file system the mounts show, unless it is read-only
// or shut down already. Every mount of a device shows the same file system,
// so the first mount that opens serves; the others are tried only when it
// does not open.
func stop(device string, rdev uint64, mounts []*mountinfo.Info, ns Namespace) error {
	var tried []error
	for _, m := range mounts {
		if readOnlySuper(m) {
			continue
		}
		root, down, err := ns.openUnlessSaysShutDown(m, rdev)
		if down {
			return nil
		}
		if err != nil {
			tried = append(tried, err)
			continue
		}
		supported, err := shutDown(root)
		err = errors.Join(err, root.Close())
		if !supported {
			return fmt.Errorf("%w: %s (%s) mounted at %s", ErrNoShutdown, device, m.FSType, m.Mountpoint)
		}
		if err == nil {
			return nil
		}
		tried = append(tried, err)
	}
	if len(tried) == 0 {
		return nil // every mount is of a read-only file system
	}
	return fmt.Errorf("failed to shut down the file system on %s: %w", device, errors.Join(tried...))
}

// checkNotHeld fails when the device is held exclusively while no mount of
// it shows: its holder may be a file system mounted where the namespace does
// not look, which the read-only flag would not stop. The probe is an
// exclusive open, closed at once; a mount racing it fails with EBUSY, as it
// would against any other exclusive opener. A file system whose mounts show
// another device number than its device's (btrfs shows an anonymous one)
// has no shutdown either (btrfs, Linux 6.18): it is named by its mount's
// source. A device claimed by stacked devices passes when they are fenced
// (checkHolders).
func checkNotHeld(device string, rdev uint64, ns Namespace) error {
	fd, err := unix.Open(device, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EBUSY) {
		if held, err := checkHolders(device, rdev, ns); held || err != nil {
			return err
		}
		if m, err := ns.mountFrom(rdev); err != nil {
			return err
		} else if m != nil {
			return fmt.Errorf("%w: %s (%s) mounted at %s", ErrNoShutdown, device, m.FSType, m.Mountpoint)
		}
		return fmt.Errorf("%w: %s is held exclusively, and %s shows no mount of it",
			ErrUnseenHolder, device, filepath.Join(ns.proc(), "mountinfo"))
	}
	if err != nil {
		return &os.PathError{Op: "open O_EXCL", Path: device, Err: err}
	}
	return unix.Close(fd)
}

// Lift clears the device's read-only flag, and reports with
// ErrStillShutDown a file system mounted from it that a fence shut down: it
// fails every write until it is unmounted and mounted again.
func Lift(device *os.File, ns Namespace) error {
	rdev, mounts, err := setFlag(device, false, ns)
	if err != nil {
		return err
	}
	m, err := ns.readWriteMount(mounts, rdev, true)
	if m != nil {
		return fmt.Errorf("%w: %s (%s) at %s fails every write until it is unmounted and mounted again",
			ErrStillShutDown, device.Name(), m.FSType, m.Mountpoint)
	}
	return err
}

// setFlag sets or clears the device's read-only flag, and then lists the
// mounts of the file system on it: the device number and the mounts.
func setFlag(device *os.File, readOnly bool, ns Namespace) (uint64, []*mountinfo.Info, error) {
	if err := loop.SetReadOnly(device, readOnly); err != nil {
		return 0, nil, err
	}
	rdev, err := blockDevice(device)
	if err != nil {
		return 0, nil, err
	}
	mounts, err := ns.mountsOf(rdev)
	return rdev, mounts, err
}

// blockDevice returns the device number of an open block device.
func blockDevice(device *os.File) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(device.Fd()), &st); err != nil {
		return 0, &os.PathError{Op: "fstat", Path: device.Name(), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return 0, fmt.Errorf("%s is not a block device", device.Name())
	}
	return st.Rdev, nil
}
