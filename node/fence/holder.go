package fence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnfencedHolder: the device is claimed by a stacked device (DRBD over a
// zvol) that still takes writes: its own fence has to come first.
var ErrUnfencedHolder = errors.New("the device is held by a stacked device that is not fenced")

// sysBlock is where sysfs shows the block devices by number; a variable for
// the tests.
var sysBlock = "/sys/dev/block"

// checkHolders passes a device claimed by stacked devices only when each of
// them is fenced: read-only, and with no file system mounted read-write from
// it that is not shut down. A claimed device cannot be mounted itself, so
// every write to it comes through its holders (a raw writer's the flag
// stops); the holders' fences are their owners' to set, before this one
// (the agent fences the DRBD device before the zvol under it). It reports
// whether the device has a holder at all.
func checkHolders(device string, rdev uint64, ns Namespace) (held bool, err error) {
	dir := filepath.Join(sysBlock, fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev)), "holders")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if err := checkHolder(device, filepath.Join(dir, e.Name()), e.Name(), ns); err != nil {
			return true, err
		}
	}
	return len(entries) > 0, nil
}

// checkHolder checks one holder, by its sysfs directory: its read-only flag
// (sysfs ro, which shows BLKROSET and the driver's own flag, DRBD's on a
// Secondary) and the mounts of its number.
func checkHolder(device, dir, name string, ns Namespace) error {
	ro, err := os.ReadFile(filepath.Join(dir, "ro"))
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(ro)) != "1" {
		return fmt.Errorf("%w: %s is held by %s, which is writable", ErrUnfencedHolder, device, name)
	}
	number, err := os.ReadFile(filepath.Join(dir, "dev"))
	if err != nil {
		return err
	}
	var major, minor uint32
	if _, err := fmt.Sscanf(strings.TrimSpace(string(number)), "%d:%d", &major, &minor); err != nil {
		return fmt.Errorf("%s/dev: %q is not major:minor", dir, number)
	}
	rdev := unix.Mkdev(major, minor)
	mounts, err := ns.mountsOf(rdev)
	if err != nil {
		return err
	}
	m, err := ns.readWriteMount(mounts, rdev, false)
	if m != nil {
		return fmt.Errorf("%w: %s is held by %s, whose file system at %s (%s) is not shut down",
			ErrUnfencedHolder, device, name, m.Mountpoint, m.FSType)
	}
	return err
}
