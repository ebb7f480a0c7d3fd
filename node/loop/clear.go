package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Attachment reads what is attached to the device now, as List would list
// it: the record Clear and StillAttached take to mean this attachment and
// no later one. A device with nothing attached is an error that is
// os.ErrNotExist.
func Attachment(device string) (Device, error) {
	d, err := readDevice(filepath.Join("/sys/block", filepath.Base(device)))
	if errors.Is(err, unix.ENXIO) || errors.Is(err, unix.ENODEV) {
		err = fmt.Errorf("%s: %w", device, os.ErrNotExist)
	}
	return d, err
}

// Clear detaches the attachment d records, and nothing else: a name is
// anyone's once its attachment is gone, so detaching a name a moment after
// looking at it (losetup --detach) can take another user's device -- a
// test's cleanup once did, under a pool's volume between its attach and
// its first read, which then read an empty device.
//
// So the device is opened first and asked, on that descriptor, what is
// attached (LOOP_GET_STATUS64). While the descriptor is open the kernel
// cannot run the attachment down (a detach only marks it to clear at the
// last close), so the answer still holds when the same descriptor clears
// it (LOOP_CLR_FD). The read-only flag is cleared first: a fence
// (BLKROSET) outlives the attachment, and the next file attached to the
// device would find every write refused. The kernel clears the device at
// its last close: at once unless something else holds it open.
//
// A device with nothing attached, or another attachment, is left alone:
// nil, as what was asked is done.
func Clear(d Device) error {
	err := WithOpen(d.Name, unix.O_RDONLY, func(fd int) error {
		info, err := unix.IoctlLoopGetStatus64(fd)
		if err != nil {
			return err
		}
		if !d.is(info) {
			return nil
		}
		return errors.Join(unix.IoctlSetPointerInt(fd, unix.BLKROSET, 0), unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0))
	})
	if errors.Is(err, unix.ENXIO) || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("detaching %s: %w", d, err)
	}
	return nil
}

// is tells whether the attachment the kernel describes (on a descriptor
// the caller holds, so it cannot change underneath) is the one d records:
// the same disk sequence number where the kernel has one, else the same
// backing file by identity, else by path (see StillAttached).
func (d Device) is(info *unix.LoopInfo64) bool {
	if d.DiskSeq == 0 && d.BackInode != 0 {
		return info.Inode == d.BackInode && info.Device == d.BackDevice
	}
	return d.StillAttached()
}

// StillAttached tells whether the device is still the attachment d
// records, from sysfs alone (nothing opened): the same disk sequence
// number (the kernel raises it at the detach, and the next attach of the
// name, anyone's, raises it again) or, on a kernel without one, the same
// backing file path.
func (d Device) StillAttached() bool {
	if d.DiskSeq != 0 {
		seq, err := DiskSeq(d.Name)
		return err == nil && seq == d.DiskSeq
	}
	return d.attachedAsBefore()
}

// AwaitCleared waits until none of devices is still the attachment it
// records (polling sysfs every poll), or ctx ends: it returns those still
// attached then. A cleared device held open by another goes only at that
// other's last close.
func AwaitCleared(ctx context.Context, poll time.Duration, devices ...Device) []Device {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	left := slices.Clone(devices)
	for {
		left = slices.DeleteFunc(left, func(d Device) bool { return !d.StillAttached() })
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return left
		case <-tick.C:
		}
	}
}

func (d Device) attachedAsBefore() bool {
	backing, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(d.Name), "loop", "backing_file"))
	return err == nil && strings.TrimSuffix(string(backing), "\n") == d.BackFile
}
