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
	"time"

	"github.com/baton-dr/baton/node/loop"
)

// Loops lists the loop devices whose backing file is under dir, sorted.
func Loops(ctx context.Context, dir string) ([]string, error) {
	devices, err := loopsUnder(ctx, dir)
	var out []string
	for _, d := range devices {
		out = append(out, d.Name)
	}
	return out, err
}

// loopsUnder lists the attachments whose backing file is under dir, sorted
// by name.
func loopsUnder(ctx context.Context, dir string) ([]loop.Device, error) {
	devices, err := loop.List(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(devices, func(d loop.Device) bool { return !strings.HasPrefix(d.BackFile, dir+"/") }), nil
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

// scrubWait bounds how long Scrub waits for the kernel to let the devices
// go: a lazily unmounted file system holds its device until the last file
// open in it is closed.
const scrubWait = 30 * time.Second

// Scrub unmounts (lazily) and detaches whatever is left under dir, waits
// until the kernel let the devices go, and says how much that was. The
// loop devices are listed first: once a pool is unmounted, losetup shows
// its volumes' files by paths no longer under dir. Each is detached as
// the attachment listed (loop.Clear): a name freed meanwhile may be
// another user's device.
func Scrub(ctx context.Context, dir string) (mounts, loops int, err error) {
	loopList, err := loopsUnder(ctx, dir)
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
		errs = append(errs, loop.Clear(loopList[i]))
	}
	ctx, cancel := context.WithTimeout(ctx, scrubWait)
	defer cancel()
	if left := loop.AwaitCleared(ctx, 20*time.Millisecond, loopList...); len(left) > 0 {
		errs = append(errs, fmt.Errorf("still attached %s after their detach (held open): %v", scrubWait, left))
	}
	return len(mountList), len(loopList), errors.Join(errs...)
}
