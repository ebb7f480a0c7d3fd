package zfs

import (
	"context"
	"errors"
	"strconv"
	"syscall"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
)

// udevTimeoutSeconds bounds the wait for a zvol's /dev/zvol link: zfs creates
// the minor asynchronously and udev names it after.
const udevTimeoutSeconds = 30

// Open opens a volume's zvol for block I/O, read-write, or read-only when the
// volume is fenced (readonly=on): its writes then fail with ErrRefused, as
// do the writes of devices opened before the fence.
func (p *Pool) Open(volume string) (backend.Device, error) {
	info, err := p.Volume(volume)
	if err != nil {
		return nil, err
	}
	path := p.DevicePath(volume)
	if err := p.awaitDevice(path); err != nil {
		return nil, err
	}
	f, err := p.options.OpenDevice(path, true)
	if isReadOnly(err) {
		f, err = p.options.OpenDevice(path, false)
	}
	if err != nil {
		return nil, deviceError(err, path)
	}
	return &device{ErrnoDevice: backend.ErrnoDevice{Device: f, Path: path, Classify: deviceError}, sizeBytes: info.SizeBytes}, nil
}

// awaitDevice waits until udev has made the volume's link.
func (p *Pool) awaitDevice(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.options.CommandTimeout)
	defer cancel()
	err := p.options.Cmder.Command(ctx, "udevadm", "wait", "--settle", "--timeout="+strconv.Itoa(udevTimeoutSeconds), path).Run()
	var run *exec.RunError
	if errors.As(err, &run) {
		return refuse(backend.ErrNotFound, "%s: no such device: %s", path, run.Sentence())
	}
	return err
}

// device is an open zvol. Its errors carry the kernel's words and the kind
// they mean.
type device struct {
	backend.ErrnoDevice
	sizeBytes uint64
}

func (d *device) WriteAt(b []byte, offset int64) (int, error) {
	n, err := d.Device.WriteAt(b, offset)
	if err == nil {
		return n, nil
	}
	if offset < 0 || uint64(offset)+uint64(len(b)) > d.sizeBytes {
		// Linux writes what fits before the end and refuses the rest.
		return n, refuse(backend.ErrInvalid, "cannot write '%s': No space left on device", d.Path)
	}
	return n, deviceError(err, d.Path)
}

// isReadOnly reports an errno that says the device takes no writes: EROFS
// and EACCES refuse a read-write open of a read-only disk, EPERM a write to
// it, EBADF a write through a read-only descriptor.
func isReadOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EACCES) ||
		errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EBADF)
}

// deviceError classifies a device's errno.
func deviceError(err error, path string) error {
	switch {
	case isReadOnly(err):
		return refuse(backend.ErrRefused, "cannot write '%s': Read-only file system (%v)", path, err)
	case errors.Is(err, syscall.ENOSPC):
		return refuse(backend.ErrPoolFull, "cannot write '%s': No space left on device", path)
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENXIO):
		return refuse(backend.ErrNotFound, "%s: %v", path, err)
	case errors.Is(err, syscall.EBUSY):
		return refuse(backend.ErrBusy, "%s: %v", path, err)
	}
	return err
}
