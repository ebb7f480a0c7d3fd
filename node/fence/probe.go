package fence

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// probeName is the extended attribute the shutdown probe asks for. Nothing
// sets it: a live file system answers that it is not there.
const probeName = "trusted.baton.shutdown-probe"

// probeShutDown reports whether the file system an open file of it is on is
// shut down, by asking it for an extended attribute that is not set: a
// shut-down ext4 refuses every xattr get with EIO before it looks for the
// name (ext4_xattr_get, since Linux 4.11), and so does xfs (xfs_attr_get),
// while a live one answers ENODATA. This is what Linux 6.1 shows of an
// ext4's shutdown, where neither the super options nor an open of its root
// do. The get writes nothing. For a name that is not set it reads only the
// xattrs the inode has (in its inode's block, or its own xattr block), and
// an inode with none -- the root of a fresh mkfs -- is answered from memory;
// a live file system whose read of them failed would answer EIO too, and
// read as shut down.
//
// The trusted namespace is the file system's to answer for a caller with
// CAP_SYS_ADMIN (the agent, privileged), and a nouser_xattr mount does not
// refuse it as it refuses user.*. Without the capability the kernel answers
// ENODATA itself, without asking the file system: the probe then misses
// every shutdown, as shutdown.go's checks alone did on 6.1 -- Lift passes
// over the mount, a holder's check fails closed (ErrUnfencedHolder), and
// Fence shuts the file system down again, which changes nothing.
func probeShutDown(root *os.File) (down bool, err error) {
	_, err = unix.Fgetxattr(int(root.Fd()), probeName, nil)
	switch {
	case err == nil:
		// Someone set the name: the file system answered, so it is live.
		return false, nil
	case errors.Is(err, unix.EIO):
		return true, nil
	case errors.Is(err, unix.ENODATA):
		// The name is not set, and the file system said so: it is live.
		return false, nil
	case errors.Is(err, unix.EOPNOTSUPP): // ENOTSUP is the same number on Linux
		// A file system without xattrs (or without the trusted namespace)
		// cannot answer: the probe tells nothing, and the other checks
		// decide.
		return false, nil
	}
	return false, &os.PathError{Op: "fgetxattr " + probeName, Path: root.Name(), Err: err}
}
