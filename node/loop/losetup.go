package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/baton-dr/baton/node/exec"
)

// Tool is the name errors of this file carry.
const Tool = "losetup"

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
	ours, err := Attachment(device)
	if errors.Is(err, os.ErrNotExist) {
		// Not attached now. A device the kernel is tearing down (its last
		// close came with the clear mark) is already unlisted and refuses
		// the detach with ENXIO: it is going, which is what was asked.
		err := l.Cmder.Command(ctx, "losetup", "--detach", device).Run()
		if run, ok := errors.AsType[*exec.RunError](err); ok && strings.Contains(run.Words(), "No such device or address") {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	// A device already marked to clear at its last close (by an earlier
	// detach while a scanner held it) refuses the detach with ENXIO while
	// the kernel tears it down: what the caller wanted is happening, and
	// the wait below sees whether it did -- for this attachment, not for
	// the next one of the name, which is anyone's.
	detachErr := l.Cmder.Command(ctx, "losetup", "--detach", device).Run()
	ctx, cancel := context.WithTimeout(ctx, detachWait)
	defer cancel()
	if left := AwaitCleared(ctx, 20*time.Millisecond, ours); len(left) > 0 {
		return errors.Join(detachErr, fmt.Errorf("losetup --detach %s: the device is still attached (held open elsewhere): %w", device, ctx.Err()))
	}
	return nil
}

// Refresh makes a loop device take its backing file's new size.
func (l Losetup) Refresh(ctx context.Context, device string) error {
	return l.Cmder.Command(ctx, "losetup", "--set-capacity", device).Run()
}

// ParseShow reads the device path `losetup --find --show` prints.
func ParseShow(out []byte) (string, error) {
	name := strings.TrimSpace(string(out))
	if !strings.HasPrefix(name, "/dev/") || strings.ContainsAny(name, " \t\n") {
		return "", fmt.Errorf("losetup --show printed %q, not a device path", name)
	}
	return name, nil
}
