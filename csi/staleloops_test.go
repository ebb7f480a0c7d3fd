package csi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/loop"
)

// ownerLock is the file in a loop-devices directory (csi-loops*) that its
// test process holds locked (flock) from before its first device until
// after the directory is gone. The kernel drops a flock when the last
// descriptor of it closes, which a process's end does however it ends --
// SIGKILL of `go test` included -- so a directory whose lock another
// process can take belongs to no running test: the devices attached over
// its files are a dead run's, and nobody else's.
const ownerLock = "owner.lock"

// claimDir makes this process the owner of dir: the lock file is made
// under another name, locked, and only then renamed into place, so a sweep
// never finds it unlocked. The returned file holds the lock; closing it
// gives the directory up.
func claimDir(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ownerLock+".*")
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil, errors.Join(fmt.Errorf("flock %s: %w", f.Name(), err), f.Close())
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, ownerLock)); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

// releaseStaleLoops releases what earlier test runs that died left under
// base/csi-loops*: for each directory whose owner lock it can take (its
// owner is gone), every loop device backed by one of the directory's files
// -- known by the (device, inode) the loop driver reports against the
// file's, not by a path -- is unmounted wherever this namespace has it
// mounted, its read-only flag cleared and detached, and the directory is
// removed once none is left. A directory without a lock (made before
// locks, or being made) or whose lock is held is not touched. released
// names the devices released; the error, what could not be.
func releaseStaleLoops(base string) (released []string, err error) {
	dirs, err := filepath.Glob(filepath.Join(base, "csi-loops*"))
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, dir := range dirs {
		got, err := releaseStaleDir(dir)
		released = append(released, got...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", dir, err))
		}
	}
	return released, errors.Join(errs...)
}

func releaseStaleDir(dir string) (released []string, err error) {
	lock, err := os.Open(filepath.Join(dir, ownerLock))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		return nil, nil // its owner runs
	} else if err != nil {
		return nil, err
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var images []loop.FileID
	for _, f := range files {
		var st unix.Stat_t
		if f.Type().IsRegular() && unix.Lstat(filepath.Join(dir, f.Name()), &st) == nil {
			images = append(images, loop.FileID{Device: st.Dev, Inode: st.Ino})
		}
	}
	loops, err := loopsBacking(images)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, d := range loops {
		if err := releaseLoop(d); err != nil {
			errs = append(errs, err)
			continue
		}
		released = append(released, d.Name)
	}
	left, err := loopsBacking(images)
	if err == nil && len(left) > 0 {
		err = fmt.Errorf("still attached: %v (the directory is kept for the next run)", left)
	}
	if err != nil {
		return released, errors.Join(append(errs, err)...)
	}
	return released, errors.Join(append(errs, os.RemoveAll(dir))...)
}

// loopsBacking lists the attached loop devices whose backing file is one
// of files, by identity.
func loopsBacking(files []loop.FileID) ([]loop.Device, error) {
	all, _, err := loop.Scan(context.Background())
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(d loop.Device) bool {
		return !slices.ContainsFunc(files, d.BackedBy)
	}), nil
}

// releaseLoop unmounts every mount of the device in this mount namespace,
// the innermost first, and detaches it (loop.Clear: that attachment only,
// its read-only flag cleared first). With no opener left the kernel
// detaches it at once.
func releaseLoop(d loop.Device) error {
	targets, err := mountsOf(d.Number)
	if err != nil {
		return err
	}
	for i := len(targets) - 1; i >= 0; i-- {
		if err := unix.Unmount(targets[i], 0); err != nil {
			return fmt.Errorf("umount %s (%s): %w", targets[i], d, err)
		}
	}
	return loop.Clear(d)
}

// mountsOf lists, in mountinfo's order, the mount points of this mount
// namespace whose file system is on the block device rdev.
func mountsOf(rdev uint64) ([]string, error) {
	major, minor := int(unix.Major(rdev)), int(unix.Minor(rdev))
	mounts, err := mountinfo.GetMounts(func(m *mountinfo.Info) (skip, stop bool) {
		return m.Major != major || m.Minor != minor, false
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mounts {
		out = append(out, m.Mountpoint)
	}
	return out, nil
}
