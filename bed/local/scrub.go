package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	nodeexec "github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/loop"
)

// scrub unmounts and detaches whatever is left under dir once the processes
// stopped: after a clean stop, nothing (the node agents leave no mount and
// no loop device); after a failure, what the failure left. The loop devices
// are listed first: once a pool is unmounted, losetup shows its volumes'
// files by paths no longer under dir.
func scrub(dir string) error {
	if dir == "" {
		return nil
	}
	loops, err := LoopsUnder(dir)
	if err != nil {
		return err
	}
	mounts, err := MountsUnder(dir)
	if err != nil {
		return err
	}
	var errs []error
	for i := len(mounts) - 1; i >= 0; i-- {
		if out, err := exec.Command("umount", "-l", mounts[i]).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("umount %s: %w: %s", mounts[i], err, out))
		}
	}
	for i := len(loops) - 1; i >= 0; i-- {
		if out, err := exec.Command("losetup", "--detach", loops[i]).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("losetup --detach %s: %w: %s", loops[i], err, out))
		}
	}
	if len(mounts)+len(loops) > 0 {
		errs = append(errs, fmt.Errorf("the bed's processes left %d mounts and %d loop devices under %s (removed)",
			len(mounts), len(loops), dir))
	}
	return errors.Join(errs...)
}

// LoopsUnder lists the loop devices whose backing file is under dir.
func LoopsUnder(dir string) ([]string, error) {
	devices, err := loop.Losetup{Cmder: nodeexec.Local{}}.List(context.Background())
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

// MountsUnder lists the mount points under dir, deepest last.
func MountsUnder(dir string) ([]string, error) {
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
