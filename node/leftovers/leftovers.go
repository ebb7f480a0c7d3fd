// Package leftovers finds and removes what processes left on the host under
// a directory: mounts and loop devices. A bed's teardown and the tests that
// run the node agent as a process use it to prove a clean stop left nothing,
// and to clean up after one that did not.
package leftovers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/baton-dr/baton/node/loop"
)

// Loops lists the loop devices whose backing file is under dir, sorted.
func Loops(ctx context.Context, dir string) ([]string, error) {
	devices, err := loop.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range devices {
		if strings.HasPrefix(d.BackFile, dir+"/") {
			out = append(out, d.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Mounts lists the mount points under dir, deepest last (in mount order).
func Mounts(dir string) ([]string, error) {
	data, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && strings.HasPrefix(fields[1], dir+"/") {
			out = append(out, fields[1])
		}
	}
	return out, nil
}

// Scrub unmounts (lazily) and detaches whatever is left under dir and says
// how much that was. The loop devices are listed first: once a pool is
// unmounted, losetup shows its volumes' files by paths no longer under dir.
func Scrub(ctx context.Context, dir string) (mounts, loops int, err error) {
	loopList, err := Loops(ctx, dir)
	if err != nil {
		return 0, 0, err
	}
	mountList, err := Mounts(dir)
	if err != nil {
		return 0, 0, err
	}
	var errs []error
	for i := len(mountList) - 1; i >= 0; i-- {
		if out, err := exec.CommandContext(ctx, "umount", "-l", mountList[i]).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("umount %s: %w: %s", mountList[i], err, out))
		}
	}
	for i := len(loopList) - 1; i >= 0; i-- {
		if out, err := exec.CommandContext(ctx, "losetup", "--detach", loopList[i]).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("losetup --detach %s: %w: %s", loopList[i], err, out))
		}
	}
	return len(mountList), len(loopList), errors.Join(errs...)
}
