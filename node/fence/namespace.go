package fence

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// NodeProc is the /proc directory of the node's init process: with hostPID,
// a process of the node's mount namespace, where kubelet mounts volumes.
const NodeProc = "/proc/1"

// Namespace is a mount namespace, seen through the /proc directory of a
// process in it.
type Namespace struct {
	// Proc is the process's /proc directory; NodeProc unless set.
	Proc string
}

func (n Namespace) proc() string {
	if n.Proc == "" {
		return NodeProc
	}
	return n.Proc
}

// mounts lists the namespace's mounts that filter keeps, in mountinfo's
// order.
func (n Namespace) mounts(filter mountinfo.FilterFunc) ([]*mountinfo.Info, error) {
	path := filepath.Join(n.proc(), "mountinfo")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read the node's mounts: %w", err)
	}
	defer f.Close()
	mounts, err := mountinfo.GetMountsFromReader(f, filter)
	if err != nil {
		return nil, fmt.Errorf("failed to parse %s: %w", path, err)
	}
	return mounts, nil
}

// mountsOf lists the mounts of the file system on the block device rdev:
// those whose files have rdev as their device number.
func (n Namespace) mountsOf(rdev uint64) ([]*mountinfo.Info, error) {
	major, minor := int(unix.Major(rdev)), int(unix.Minor(rdev))
	return n.mounts(func(m *mountinfo.Info) (skip, stop bool) {
		return m.Major != major || m.Minor != minor, false
	})
}

// mountFrom finds a mount whose source is the block device rdev, by the
// device node its source names in the namespace: nil if none.
func (n Namespace) mountFrom(rdev uint64) (*mountinfo.Info, error) {
	mounts, err := n.mounts(func(m *mountinfo.Info) (skip, stop bool) {
		return !filepath.IsAbs(m.Source), false
	})
	if err != nil {
		return nil, err
	}
	for _, m := range mounts {
		source, err := n.open(m.Source, unix.O_PATH)
		if err != nil {
			continue // a source that names no file here is not the device
		}
		var st unix.Stat_t
		err = unix.Fstat(int(source.Fd()), &st)
		source.Close()
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK && st.Rdev == rdev {
			return m, nil
		}
	}
	return nil, nil
}

// openRoot opens the root directory of a mount: without blocking or
// following a last link, so what opens is the directory, nothing a file
// system could act on.
func (n Namespace) openRoot(mount *mountinfo.Info) (*os.File, error) {
	return n.open(mount.Mountpoint, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK)
}

// open opens a path of the namespace, resolved inside the namespace's root:
// a symbolic link on the way stays in it.
func (n Namespace) open(path string, flags int) (*os.File, error) {
	root, err := os.OpenFile(filepath.Join(n.proc(), "root"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fd, err := unix.Openat2(int(root.Fd()), path, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_IN_ROOT,
	})
	if err != nil {
		return nil, &os.PathError{Op: "openat2", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
