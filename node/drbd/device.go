package drbd

import (
	"errors"
	"syscall"

	"github.com/baton-dr/baton/storage/backend"
)

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
