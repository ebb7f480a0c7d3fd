package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Device is one attached loop device as the kernel reports it.
type Device struct {
	Name     string // "/dev/loop3"
	BackFile string // the backing file's path now (sysfs follows renames)
	// BackDevice and BackInode are the backing file's identity (stat's
	// st_dev and st_ino). The path is only how this mount namespace names
	// the file: once the namespace that attached it is gone, the kernel
	// names it relative to a mount that no longer exists, and the same file
	// looks like another one.
	BackDevice uint64
	BackInode  uint64
	DirectIO   bool
	ReadOnly   bool
	// Node is the identity of the device's own node in this /dev: a loop
	// device attached over this one (kubelet's map of a block volume)
	// shows it as its backing file's. Number is the device number, as a
	// process holding the device open shows it. Both are zero where this
	// /dev has no node for the device.
	Node   FileID
	Number uint64
	// DiskSeq is the kernel's sequence number of the device (sysfs
	// diskseq): the kernel raises it at every attach and every detach, and
	// never gives it to another device, so it names this attachment where
	// the name does not -- a freed /dev/loop3 is the next attach's,
	// anyone's. Zero on a kernel without it (before 5.15).
	DiskSeq uint64
}

func (d Device) String() string { return fmt.Sprintf("%s (%s)", d.Name, d.BackFile) }

// Backs reports whether file is this device's backing file, by identity.
func (d Device) Backs(file os.FileInfo) bool {
	st, ok := file.Sys().(*syscall.Stat_t)
	return ok && d.BackedBy(FileID{uint64(st.Dev), st.Ino})
}

// BackedBy reports whether the file id names is this device's backing file.
func (d Device) BackedBy(id FileID) bool {
	return d.BackInode != 0 && d.BackInode == id.Inode && d.BackDevice == id.Device
}

// FileID is a file's identity whatever path shows it: its file system's
// device number and its inode (stat's st_dev and st_ino).
type FileID struct{ Device, Inode uint64 }

// OpenLimit bounds opening one loop device. An open waits while the kernel
// runs a device down (its last close flushing to the backing file), which
// on a loaded host can take a while; a device that does not answer within
// the limit is named instead of hanging its caller.
const OpenLimit = 20 * time.Second

// ErrOpenBlocked is WithOpen's error for a device whose open did not return
// within OpenLimit.
var ErrOpenBlocked = fmt.Errorf("its open did not return within %s", OpenLimit)

// WithOpen opens the device, runs f on it and closes it, giving up after
// OpenLimit (the call then finishes on its own, unwaited for).
func WithOpen(device string, flags int, f func(fd int) error) error {
	done := make(chan error, 1)
	go func() {
		fd, err := unix.Open(device, flags|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(fd)
		done <- f(fd)
	}()
	timer := time.NewTimer(OpenLimit)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return ErrOpenBlocked
	}
}

// List lists every attached loop device, sorted by name; a device whose
// open blocks (see Scan) is an error naming it.
func List(ctx context.Context) ([]Device, error) {
	devices, unanswered, err := Scan(ctx)
	if err == nil && len(unanswered) > 0 {
		err = fmt.Errorf("listing the loop devices: could not ask %s what backs them: %w", strings.Join(unanswered, ", "), ErrOpenBlocked)
	}
	return devices, err
}

// Scan lists every attached loop device, sorted by name, as losetup --list
// does but without a process: the backing path, direct I/O and read-only
// flags from sysfs, the backing file's identity from the device itself
// (LOOP_GET_STATUS64), the device node's own identity from stat.
// unanswered names the devices whose open did not return within OpenLimit,
// left out of devices. A device whose node this /dev lacks (a container's
// /dev made before it was attached) is listed without identities, as
// losetup lists it.
func Scan(ctx context.Context) (devices []Device, unanswered []string, err error) {
	files, err := filepath.Glob("/sys/block/loop*/loop/backing_file")
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		sys := filepath.Dir(filepath.Dir(f))
		d, err := readDevice(sys)
		switch {
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENXIO) || errors.Is(err, unix.ENODEV):
			// Detached between the glob and the look, or being run down:
			// sysfs answers a read of a going device's attributes ENODEV.
			continue
		case errors.Is(err, ErrOpenBlocked):
			unanswered = append(unanswered, d.Name)
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		devices = append(devices, d)
	}
	slices.SortFunc(devices, func(a, b Device) int { return strings.Compare(a.Name, b.Name) })
	return devices, unanswered, nil
}

// readDevice reads one attached device from its sysfs directory sys
// (/sys/block/loop3) and its node.
func readDevice(sys string) (Device, error) {
	d := Device{Name: "/dev/" + filepath.Base(sys)}
	backing, err := os.ReadFile(filepath.Join(sys, "loop", "backing_file"))
	if err != nil {
		return d, err
	}
	d.BackFile = strings.TrimSuffix(string(backing), "\n")
	if d.DirectIO, err = sysFlag(filepath.Join(sys, "loop", "dio")); err != nil {
		return d, err
	}
	if d.ReadOnly, err = sysFlag(filepath.Join(sys, "ro")); err != nil {
		return d, err
	}
	if d.DiskSeq, err = DiskSeq(d.Name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return d, err
	}
	var st unix.Stat_t
	if err := unix.Stat(d.Name, &st); errors.Is(err, unix.ENOENT) {
		return d, nil
	} else if err != nil {
		return d, err
	}
	d.Node, d.Number = FileID{st.Dev, st.Ino}, st.Rdev
	err = WithOpen(d.Name, unix.O_RDONLY, func(fd int) error {
		info, err := unix.IoctlLoopGetStatus64(fd)
		if err == nil {
			d.BackDevice, d.BackInode = info.Device, info.Inode
		}
		return err
	})
	return d, err
}

// DiskSeq reads the device's sequence number (see Device.DiskSeq) from
// sysfs: a device gone from /sys/block, or a kernel without diskseq, is
// an error that is os.ErrNotExist.
func DiskSeq(device string) (uint64, error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(device), "diskseq"))
	if err != nil {
		return 0, err
	}
	seq, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s's diskseq: %w", device, err)
	}
	return seq, nil
}

// sysFlag reads a sysfs attribute that holds 0 or 1.
func sysFlag(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	switch v := strings.TrimSpace(string(data)); v {
	case "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("%s holds %q, not 0 or 1", path, v)
	}
}
