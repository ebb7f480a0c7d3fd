package zfs

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/baton-dr/baton/node/exec"
)

// CreateFilePool makes a pool on a sparse file, for beds and tests that have
// no disk to spare: `truncate -s` and `zpool create`. It never re-creates: a
// pool of that name already imported is adopted as it is, and a file that
// holds it is imported (`zpool import -d`); only when neither exists is a new
// file made. zpool create runs without -f, so it refuses a file that holds
// another pool's label rather than overwrite it.
func CreateFilePool(ctx context.Context, cmder exec.Cmder, name, file string, sizeBytes uint64) error {
	if err := cmder.Command(ctx, "zpool", "list", "-H", "-o", "name", name).Run(); err == nil {
		return nil
	}
	exists := cmder.Command(ctx, "test", "-e", file).Run() == nil
	if exists {
		err := cmder.Command(ctx, "zpool", "import", "-d", path.Dir(file), name).Run()
		if err == nil {
			return nil
		}
		return fmt.Errorf("failed to import pool %s from %s, which exists; not re-creating it: %w", name, file, err)
	}
	if err := cmder.Command(ctx, "truncate", "-s", strconv.FormatUint(sizeBytes, 10), file).Run(); err != nil {
		return fmt.Errorf("failed to make pool file %s: %w", file, err)
	}
	// ashift 12 is what a 4 KiB-sector disk gets; the pool's root is no
	// file system anyone mounts.
	err := cmder.Command(ctx, "zpool", "create", "-o", "ashift=12", "-m", "none", name, file).Run()
	if err != nil {
		return fmt.Errorf("failed to create pool %s on %s: %w", name, file, err)
	}
	return nil
}

// DestroyFilePool destroys a pool CreateFilePool made and removes its file:
// for tests and beds tearing down what they built, never for a node's pool.
//
// A pool whose zvols udev still probes is busy for a moment: it is tried
// again after udev settles, a bounded number of times.
func DestroyFilePool(ctx context.Context, cmder exec.Cmder, name, file string) error {
	var err error
	for attempt := 0; attempt < busyAttempts; attempt++ {
		if attempt > 0 {
			_ = cmder.Command(ctx, "udevadm", "settle", "--timeout="+strconv.Itoa(udevTimeoutSeconds)).Run()
		}
		err = cmder.Command(ctx, "zpool", "destroy", "-f", name).Run()
		var run *exec.RunError
		if err == nil || (errors.As(err, &run) && strings.Contains(string(run.Stderr), "no such pool")) {
			return cmder.Command(ctx, "rm", "-f", file).Run()
		}
	}
	return fmt.Errorf("failed to destroy pool %s: %w", name, err)
}
