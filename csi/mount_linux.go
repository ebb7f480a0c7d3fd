package csi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/storage/core"
)

// OSMounter is the Mounter of a real node: blkid, mkfs.ext4/mkfs.xfs,
// mount/umount, resize2fs/xfs_growfs, statfs.
type OSMounter struct{}

var _ Mounter = OSMounter{}

func (OSMounter) Filesystem(ctx context.Context, device string) (string, error) {
	// -p probes the device itself, bypassing blkid's cache. Exit status 2:
	// nothing found, a blank device.
	out, err := run(ctx, "blkid", "-p", "-o", "value", "-s", "TYPE", device)
	var runErr *RunError
	if errors.As(err, &runErr) && runErr.ExitCode == 2 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("failed to probe %s: %w", device, err)
	}
	return strings.TrimSpace(out), nil
}

func (OSMounter) Format(ctx context.Context, device, fsType string) error {
	var err error
	switch fsType {
	case "ext4":
		_, err = run(ctx, "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=1,lazy_journal_init=1", device)
	case "xfs":
		_, err = run(ctx, "mkfs.xfs", "-q", device)
	default:
		return fmt.Errorf("%w: cannot format %s as %q", core.ErrInvalid, device, fsType)
	}
	if err != nil {
		return fmt.Errorf("failed to format %s as %s: %w", device, fsType, err)
	}
	return nil
}

func (OSMounter) Mount(ctx context.Context, device, target, fsType string, flags []string, readOnly bool) error {
	options := append([]string{}, flags...)
	if readOnly {
		options = append(options, "ro")
	}
	args := []string{"-t", fsType}
	if len(options) > 0 {
		args = append(args, "-o", strings.Join(options, ","))
	}
	if _, err := run(ctx, "mount", append(args, device, target)...); err != nil {
		return fmt.Errorf("failed to mount %s on %s: %w", device, target, err)
	}
	return nil
}

func (OSMounter) BindMount(ctx context.Context, source, target string, readOnly bool) error {
	if _, err := run(ctx, "mount", "--bind", source, target); err != nil {
		return fmt.Errorf("failed to bind %s on %s: %w", source, target, err)
	}
	if !readOnly {
		return nil
	}
	// A bind mount takes ro only on a remount.
	if _, err := run(ctx, "mount", "-o", "remount,bind,ro", target); err != nil {
		return fmt.Errorf("failed to make %s read-only: %w", target, err)
	}
	return nil
}

func (OSMounter) Unmount(ctx context.Context, target string) error {
	if _, err := run(ctx, "umount", target); err != nil {
		return fmt.Errorf("failed to unmount %s: %w", target, err)
	}
	return nil
}

// Mounted reads /proc/self/mountinfo for a mount point at path.
func (OSMounter) Mounted(_ context.Context, path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	} else if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(abs))
	return len(mounts) > 0, err
}

func (OSMounter) Resize(ctx context.Context, device, mountPath, fsType string) error {
	var err error
	switch fsType {
	case "ext4", "ext3", "ext2":
		_, err = run(ctx, "resize2fs", device)
	case "xfs":
		_, err = run(ctx, "xfs_growfs", mountPath)
	default:
		return fmt.Errorf("%w: cannot grow a %q filesystem", core.ErrInvalid, fsType)
	}
	if err != nil {
		return fmt.Errorf("failed to grow %s on %s: %w", fsType, device, err)
	}
	return nil
}

func (OSMounter) Stats(_ context.Context, path string) (VolumeStats, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return VolumeStats{}, err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		size, err := blockDeviceBytes(path)
		if err != nil {
			return VolumeStats{}, err
		}
		return VolumeStats{Block: true, TotalBytes: size}, nil
	}
	var s unix.Statfs_t
	if err := unix.Statfs(path, &s); err != nil {
		return VolumeStats{}, err
	}
	block := uint64(s.Bsize)
	return VolumeStats{TotalBytes: s.Blocks * block, AvailableBytes: s.Bavail * block, UsedBytes: (s.Blocks - s.Bfree) * block,
		TotalInodes: s.Files, FreeInodes: s.Ffree, UsedInodes: s.Files - s.Ffree}, nil
}

// blockDeviceBytes is the size of the block device at path: where a seek to
// its end lands.
func blockDeviceBytes(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	return uint64(size), nil
}

func (OSMounter) MakeDir(path string) error { return os.MkdirAll(path, 0o750) }

func (OSMounter) MakeFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o640)
	if err != nil {
		return err
	}
	return f.Close()
}

func (OSMounter) Remove(path string) error {
	err := os.Remove(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// DRBDDevices finds a member's DRBD device, /dev/drbd<minor>, which the node
// agent brings up; the kernel promotes it on the first open for writing.
type DRBDDevices struct {
	// Dir holds the device nodes; /dev unless set (tests).
	Dir string
}

var _ WatchedDevices = DRBDDevices{}

func (d DRBDDevices) Device(_ context.Context, v core.Volume) (string, error) {
	path := filepath.Join(d.WatchDir(v), fmt.Sprintf("drbd%d", v.Allocation.Minor))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: %s of %s: %w", ErrDeviceNotReady, path, v.Ref, err)
	}
	return path, nil
}

// WatchDir is where the kernel makes the device node: Dir, or /dev.
func (d DRBDDevices) WatchDir(core.Volume) string {
	if d.Dir == "" {
		return "/dev"
	}
	return d.Dir
}

// LinkDevices finds a member's device through a link the node agent keeps per
// dataset, Dir/<dataset> (the btrfs mode's loop devices).
type LinkDevices struct {
	Dir string
}

var (
	_ WatchedDevices = LinkDevices{}
	// The node agent grows a loop device (losetup --set-capacity) on its
	// pass after the volume's record grew; not a DRBD device, which is
	// therefore not GrowingDevices.
	_ GrowingDevices = LinkDevices{}
)

// DeviceBytes is the size of the device the link names.
func (LinkDevices) DeviceBytes(path string) (uint64, error) { return blockDeviceBytes(path) }

// WatchSizes watches the kernel's uevents for a block device's change.
func (LinkDevices) WatchSizes() (<-chan struct{}, func(), error) { return watchBlockChanges() }

// WatchDir is the directory of the agent's links.
func (d LinkDevices) WatchDir(core.Volume) string { return d.Dir }

func (d LinkDevices) Device(_ context.Context, v core.Volume) (string, error) {
	path, err := filepath.EvalSymlinks(filepath.Join(d.Dir, v.Dataset()))
	if err != nil {
		return "", fmt.Errorf("%w: %s of %s: %w", ErrDeviceNotReady, filepath.Join(d.Dir, v.Dataset()), v.Ref, err)
	}
	return path, nil
}
