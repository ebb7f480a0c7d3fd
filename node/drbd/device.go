package drbd

import (
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/baton-dr/baton/storage/backend"
)

// device is an open DRBD device. Its errors carry the kernel's words and
// the kind they mean.
type device struct {
	f    backend.Device
	path string
}

func (d *device) ReadAt(b []byte, offset int64) (int, error) {
	n, err := d.f.ReadAt(b, offset)
	if err != nil && err != io.EOF {
		err = deviceError(err, d.path)
	}
	return n, err
}

func (d *device) WriteAt(b []byte, offset int64) (int, error) {
	n, err := d.f.WriteAt(b, offset)
	if err != nil {
		err = deviceError(err, d.path)
	}
	return n, err
}

func (d *device) Sync() error {
	if err := d.f.Sync(); err != nil {
		return deviceError(err, d.path)
	}
	return nil
}

func (d *device) Close() error {
	if err := d.f.Close(); err != nil {
		return deviceError(err, d.path)
	}
	return nil
}

// deviceError classifies a DRBD device's errno. DRBD 8.4 refuses to open a
// Secondary's device: EROFS for writing, EMEDIUMTYPE for reading.
func deviceError(err error, path string) error {
	switch {
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EMEDIUMTYPE), errors.Is(err, syscall.EPERM),
		errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EBADF):
		return backend.Refusal(backend.ErrRefused, "drbd", "%s: %v", path, err)
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV):
		return backend.Refusal(backend.ErrNotFound, "drbd", "%s: %v", path, err)
	}
	return err
}

// openLocalDevice opens a block device on this machine, buffered: Sync
// (fsync) flushes the page cache, and DRBD forwards the flush to its peers.
func openLocalDevice(path string, writable bool) (backend.Device, error) {
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	return os.OpenFile(path, flag, 0)
}
