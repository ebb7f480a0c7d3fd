package fence

import (
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

const (
	// fsIOCShutdown is FS_IOC_SHUTDOWN, _IOR('X', 125, __u32) in
	// include/uapi/linux/fs.h (XFS_IOC_GOINGDOWN and EXT4_IOC_SHUTDOWN are
	// the same number); golang.org/x/sys/unix v0.48.0 does not define it.
	fsIOCShutdown = 0x8004587d
	// shutdownNoLogFlush is FS_SHUTDOWN_FLAGS_NOLOGFLUSH: stop without
	// writing the journal or dirty data (doc.go says why this flag).
	shutdownNoLogFlush = 0x2
)

// shutDown shuts down the file system an open directory of it is on. The
// kernel's ENOTTY (or EOPNOTSUPP) says the file system has no shutdown.
func shutDown(root *os.File) (supported bool, err error) {
	err = unix.IoctlSetPointerInt(int(root.Fd()), fsIOCShutdown, shutdownNoLogFlush)
	if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EOPNOTSUPP) {
		return false, nil
	}
	if err != nil {
		return true, &os.PathError{Op: "ioctl FS_IOC_SHUTDOWN", Path: root.Name(), Err: err}
	}
	return true, nil
}

// readOnlySuper reports whether a mount's file system (its superblock, which
// every mount of it shares) is read-only: it writes nothing, and a read-only
// device keeps it so (ext4 and xfs refuse a remount read-write then).
func readOnlySuper(m *mountinfo.Info) bool {
	return slices.Contains(strings.Split(m.VFSOptions, ","), "ro")
}

// openUnlessShutDown opens the root of a mount of the file system on the
// block device rdev, or reports that the file system is shut down: ext4 says
// so in its super options ("shutdown", Linux 6.18), xfs refuses to open
// anything once shut down (EIO), and both refuse an xattr get of the opened
// root (probeShutDown), which is all Linux 6.1's ext4 shows. The cheap
// look at the options comes first; the probe comes last, once the root is
// known to be the device's. A mount point that shows another file system (a
// mount stacked over it) is an error: nothing there may be shut down in the
// device's name.
func (n Namespace) openUnlessShutDown(m *mountinfo.Info, rdev uint64) (root *os.File, down bool, err error) {
	root, down, err = n.openUnlessSaysShutDown(m, rdev)
	if root == nil {
		return root, down, err
	}
	if down, err := probeShutDown(root); down || err != nil {
		return nil, down, errors.Join(err, root.Close())
	}
	return root, false, nil
}

// readWriteMount returns the first of mounts whose file system is read-write
// and shut down (shutDown) or live (!shutDown), as openUnlessShutDown tells,
// closing any root it opens: nil when none is. Lift looks for a shut-down
// one, checkHolder for a live one. A mount that cannot be told is an error,
// unless it showed itself shut down.
func (n Namespace) readWriteMount(mounts []*mountinfo.Info, rdev uint64, shutDown bool) (*mountinfo.Info, error) {
	for _, m := range mounts {
		if readOnlySuper(m) {
			continue
		}
		root, down, err := n.openUnlessShutDown(m, rdev)
		if root != nil {
			err = root.Close()
		}
		switch {
		case down && shutDown:
			return m, nil
		case down:
			continue
		case err != nil:
			return nil, err
		case !shutDown:
			return m, nil
		}
	}
	return nil, nil
}

// openUnlessSaysShutDown is openUnlessShutDown without the probe: Fence's
// signs of a shutdown that cannot be a live file system's failed read. A
// probe's EIO can be (probeShutDown), and a fence must not skip a live file
// system, so Fence shuts down what the probe calls down again -- which
// changes nothing on one that is.
func (n Namespace) openUnlessSaysShutDown(m *mountinfo.Info, rdev uint64) (root *os.File, down bool, err error) {
	if slices.Contains(strings.Split(m.VFSOptions, ","), "shutdown") {
		return nil, true, nil
	}
	root, err = n.openRoot(m)
	if errors.Is(err, unix.EIO) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(root.Fd()), &st); err != nil {
		return nil, false, errors.Join(&os.PathError{Op: "fstat", Path: m.Mountpoint, Err: err}, root.Close())
	}
	if st.Dev != rdev {
		return nil, false, errors.Join(errors.New(m.Mountpoint+" shows another file system (a mount over it)"), root.Close())
	}
	return root, false, nil
}
