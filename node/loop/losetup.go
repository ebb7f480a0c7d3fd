package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/exec"
)

// Tool is the name errors of this file carry.
const Tool = "losetup"

// Device is one attached loop device as the kernel reports it.
type Device struct {
	Name     string // "/dev/loop3"
	BackFile string // the backing file's path now (sysfs follows renames)
	// BackDevice and BackInode are the backing file's identity (stat's
	// st_dev and st_ino). The path is only how this mount namespace names
	// the file: once the namespace that attached it is gone, the kernel
	// names it relative to a mount that no longer exists, and the same file
	// looks like another one.
	BackDevice uint64
	BackInode  uint64
	DirectIO   bool
	ReadOnly   bool
}

// Backs reports whether file is this device's backing file, by identity.
func (d Device) Backs(file os.FileInfo) bool {
	st, ok := file.Sys().(*syscall.Stat_t)
	return ok && d.BackInode != 0 && d.BackInode == st.Ino && d.BackDevice == uint64(st.Dev)
}

// Losetup runs util-linux's losetup.
type Losetup struct {
	Cmder exec.Cmder
}

// Attach attaches a file to the first free loop device and returns the
// device's path. directIO makes the loop device read and write the file with
// O_DIRECT, which keeps the data out of a second page cache.
func (l Losetup) Attach(ctx context.Context, file string, directIO bool) (string, error) {
	args := []string{"--find", "--show"}
	if directIO {
		args = append(args, "--direct-io=on")
	}
	out, err := exec.Output(l.Cmder.Command(ctx, "losetup", append(args, file)...))
	if err != nil {
		return "", err
	}
	device, err := ParseShow(out)
	if err != nil {
		return "", err
	}
	// The block device's read-only flag (BLKROSET, a fence) outlives the
	// attachment it was set on: a loop device detached while fenced hands
	// the next file attached to it a device every write to fails with EPERM.
	if err := l.Cmder.Command(ctx, "blockdev", "--setrw", device).Run(); err != nil {
		return "", errors.Join(fmt.Errorf("clearing %s's read-only flag after attaching %s: %w", device, file, err),
			l.Cmder.Command(ctx, "losetup", "--detach", device).Run())
	}
	return device, nil
}

// detachWait bounds how long Detach waits for the kernel to let a device go.
const detachWait = 30 * time.Second

// Detach detaches a loop device and returns once the kernel has let it go.
// While anyone else holds the device open (blkid, or btrfs-progs scanning
// every block device for its filesystems) the kernel only marks it to be
// cleared at the last close and `losetup --detach` still succeeds; returning
// then would leave a caller that re-attaches the file, or checks that nothing
// is left, looking at a device that is still there.
func (l Losetup) Detach(ctx context.Context, device string) error {
	before, err := l.List(ctx)
	if err != nil {
		return err
	}
	// Another file attached to the same device name after ours let go is
	// not ours: wait for this name and this file.
	i := slices.IndexFunc(before, func(d Device) bool { return d.Name == device })
	if i < 0 {
		// Not attached now. A device the kernel is tearing down (its last
		// close came with the clear mark) is already unlisted and refuses
		// the detach with ENXIO: it is going, which is what was asked.
		err := l.Cmder.Command(ctx, "losetup", "--detach", device).Run()
		if run, ok := errors.AsType[*exec.RunError](err); ok && strings.Contains(run.Words(), "No such device or address") {
			return nil
		}
		return err
	}
	ours := before[i]
	// A device already marked to clear at its last close (by an earlier
	// detach while a scanner held it) refuses the detach with ENXIO while
	// the kernel tears it down: what the caller wanted is happening, and
	// the wait below sees whether it did.
	detachErr := l.Cmder.Command(ctx, "losetup", "--detach", device).Run()
	ctx, cancel := context.WithTimeout(ctx, detachWait)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	stillAttached := func() error {
		return errors.Join(detachErr, fmt.Errorf("losetup --detach %s: the device is still attached (held open elsewhere): %w", device, ctx.Err()))
	}
	for {
		devices, err := l.List(ctx)
		if err != nil {
			if ctx.Err() != nil {
				// The deadline killed the listing: the last look saw it attached.
				return stillAttached()
			}
			return err
		}
		if !slices.ContainsFunc(devices, func(d Device) bool { return d.Name == ours.Name && d.BackFile == ours.BackFile }) {
			return nil
		}
		select {
		case <-ctx.Done():
			return stillAttached()
		case <-tick.C:
		}
	}
}

// Refresh makes a loop device take its backing file's new size.
func (l Losetup) Refresh(ctx context.Context, device string) error {
	return l.Cmder.Command(ctx, "losetup", "--set-capacity", device).Run()
}

// List lists every attached loop device, sorted as losetup sorts them.
func (l Losetup) List(ctx context.Context) ([]Device, error) {
	out, err := exec.Output(l.Cmder.Command(ctx, "losetup", "--list", "--json", "--output", "NAME,BACK-FILE,BACK-INO,BACK-MAJ:MIN,DIO,RO"))
	if err != nil {
		return nil, err
	}
	return ParseList(out)
}

// ParseShow reads the device path `losetup --find --show` prints.
func ParseShow(out []byte) (string, error) {
	name := strings.TrimSpace(string(out))
	if !strings.HasPrefix(name, "/dev/") || strings.ContainsAny(name, " \t\n") {
		return "", fmt.Errorf("losetup --show printed %q, not a device path", name)
	}
	return name, nil
}

// listOutput is `losetup --list --json`. An empty list prints nothing at all.
type listOutput struct {
	LoopDevices []struct {
		Name     string `json:"name"`
		BackFile string `json:"back-file"`
		BackIno  uint64 `json:"back-ino"`
		// losetup pads the number pair with spaces: "     254:0  ".
		BackMajMin string `json:"back-maj:min"`
		DIO        bool   `json:"dio"`
		RO         bool   `json:"ro"`
	} `json:"loopdevices"`
}

// ParseList reads `losetup --list --json --output
// NAME,BACK-FILE,BACK-INO,BACK-MAJ:MIN,DIO,RO`.
func ParseList(out []byte) ([]Device, error) {
	if len(strings.TrimSpace(string(out))) == 0 {
		return nil, nil
	}
	var parsed listOutput
	if err := json.Unmarshal(out, &parsed); err != nil {
		return nil, fmt.Errorf("parsing losetup --list --json: %w", err)
	}
	devices := make([]Device, 0, len(parsed.LoopDevices))
	for _, d := range parsed.LoopDevices {
		if !strings.HasPrefix(d.Name, "/dev/") {
			return nil, fmt.Errorf("parsing losetup --list --json: device name %q", d.Name)
		}
		backDevice, err := parseMajMin(d.BackMajMin)
		if err != nil {
			return nil, fmt.Errorf("parsing losetup --list --json: device %s: %w", d.Name, err)
		}
		devices = append(devices, Device{Name: d.Name, BackFile: d.BackFile, BackDevice: backDevice, BackInode: d.BackIno,
			DirectIO: d.DIO, ReadOnly: d.RO})
	}
	return devices, nil
}

// parseMajMin reads losetup's "major:minor" of a backing file's device into
// the dev_t stat reports; empty (an older losetup, or none shown) is zero.
func parseMajMin(field string) (uint64, error) {
	field = strings.TrimSpace(field)
	if field == "" {
		return 0, nil
	}
	major, minor, ok := strings.Cut(field, ":")
	ma, errMajor := strconv.ParseUint(major, 10, 32)
	mi, errMinor := strconv.ParseUint(minor, 10, 32)
	if !ok || errMajor != nil || errMinor != nil {
		return 0, fmt.Errorf("back-maj:min %q is not major:minor", field)
	}
	return unix.Mkdev(uint32(ma), uint32(mi)), nil
}
