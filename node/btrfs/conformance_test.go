package btrfs

import (
	"os"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// poolBytes is the size of a test pool's sparse image: the suite needs 256
// MiB free, and a 1 GiB btrfs keeps about 900 MiB free for data.
const poolBytes = 1 << 30

// needRoot skips a test that mounts filesystems and attaches loop devices
// when it cannot; CI runs as root, so there these tests run.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: it attaches loop devices and mounts btrfs (CI runs as root)")
	}
}

// newTestPool makes a pool in a fresh directory and closes it at the end of
// the test, checking that closing detached every loop device it attached.
func newTestPool(t testing.TB) *Pool {
	t.Helper()
	needRoot(t)
	return newPoolIn(t, t.TempDir(), poolBytes)
}

// TestConformance runs the Pool suite on real btrfs.
func TestConformance(t *testing.T) {
	needRoot(t)
	pooltest.Run(t, func(t *testing.T) backend.Pool { return newTestPool(t) })
}
