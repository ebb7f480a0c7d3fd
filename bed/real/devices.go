package real

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	nodeexec "github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/loop"
)

// loopDevice is one attached loop device as the host's kernel reports it.
type loopDevice struct {
	Name string // "/dev/loop3"
	// Backing is the backing file's path as sysfs shows it: the path in
	// the mount namespace that attached it while that lives, the path from
	// the mount's own root once the namespace is gone, with " (deleted)"
	// once the file is removed.
	Backing string
	// Dev and Inode identify the backing file whatever its path shows:
	// its file system's device number and its inode (LOOP_GET_STATUS64).
	Dev, Inode uint64
}

func (d loopDevice) String() string { return fmt.Sprintf("%s (%s)", d.Name, d.Backing) }

// listLoops lists every attached loop device of the host, sorted by name.
func listLoops() ([]loopDevice, error) {
	files, err := filepath.Glob("/sys/block/loop*/loop/backing_file")
	if err != nil {
		return nil, err
	}
	var out []loopDevice
	for _, f := range files {
		backing, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // detached between the glob and the read
		}
		if err != nil {
			return nil, err
		}
		name := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(f)))
		d := loopDevice{Name: name, Backing: strings.TrimSuffix(string(backing), "\n")}
		if d.Dev, d.Inode, err = backingIdentity(name); err != nil {
			if errors.Is(err, unix.ENXIO) {
				continue // detached meanwhile
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b loopDevice) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// backingIdentity asks the loop driver which file backs the device.
func backingIdentity(device string) (dev, inode uint64, err error) {
	fd, err := unix.Open(device, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	if err != nil {
		return 0, 0, err
	}
	return info.Device, info.Inode, nil
}

// poolSuffix is the end of the path of a site's pool image, whatever the
// path shows before it: the node agent's --pool-dir is
// /var/lib/baton-realbed/<site>/pool (see site.yaml), a host directory
// bind-mounted into the node, so once the node's namespaces are gone
// sysfs shows "/<site>/pool/pool.img", "(deleted)" after it when run/ was
// removed. The site's name (baton-site-a) is the bed's alone.
func poolSuffix(site string) string { return "/" + site + "/pool/pool.img" }

// isPool tells whether the device backs one of sites' pools.
func isPool(d loopDevice, sites []string) bool {
	path := strings.TrimSuffix(d.Backing, " (deleted)")
	for _, site := range sites {
		if strings.HasSuffix(path, poolSuffix(site)) {
			return true
		}
	}
	return false
}

// bedDevices finds every loop device the bed's node agents attached: the
// sites' pools by their image's path, and each pool's volumes by identity
// -- their backing files live in the pool's btrfs, whose mounts died with
// the pods that made them, so sysfs shows them as "/volumes/<v>/head/data"
// like any btrfs-backed loop device. The pool is mounted read-only beside
// them for the time of the look, and the (device, inode) of every volume's
// head file there is matched against the loop devices'.
func bedDevices(ctx context.Context, scratch string, sites []string) (pools, volumes []loopDevice, err error) {
	all, err := listLoops()
	if err != nil {
		return nil, nil, err
	}
	for _, d := range all {
		if isPool(d, sites) {
			pools = append(pools, d)
		}
	}
	for _, pool := range pools {
		heads, err := volumeHeads(ctx, scratch, pool)
		if err != nil {
			return pools, volumes, fmt.Errorf("looking into pool %s: %w", pool, err)
		}
		for _, d := range all {
			if heads[fileID{d.Dev, d.Inode}] {
				volumes = append(volumes, d)
			}
		}
	}
	return pools, volumes, nil
}

type fileID struct{ dev, inode uint64 }

// maxVolumes bounds the walk of one pool's volumes directory.
const maxVolumes = 4096

// volumeHeads mounts the pool read-only in scratch and returns the
// identities of its volumes' head files (the btrfs layout of node/btrfs:
// volumes/<dataset>/head/data). A pool that is not btrfs, or holds no
// volumes directory, has none.
func volumeHeads(ctx context.Context, scratch string, pool loopDevice) (map[fileID]bool, error) {
	dir, err := os.MkdirTemp(scratch, "pool-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(dir)
	if out, err := exec.CommandContext(ctx, "mount", "-t", "btrfs", "-o", "ro", pool.Name, dir).CombinedOutput(); err != nil {
		if strings.Contains(string(out), "wrong fs type") {
			return nil, nil // never formatted: no volumes
		}
		return nil, fmt.Errorf("mount -o ro %s: %w: %s", pool.Name, err, strings.TrimSpace(string(out)))
	}
	defer func() {
		if out, umountErr := exec.Command("umount", dir).CombinedOutput(); umountErr != nil {
			err = errors.Join(err, fmt.Errorf("umount %s: %w: %s", dir, umountErr, strings.TrimSpace(string(out))))
		}
	}()
	entries, err := os.ReadDir(filepath.Join(dir, "volumes"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(entries) > maxVolumes {
		return nil, fmt.Errorf("%d volumes, more than the %d a bed makes", len(entries), maxVolumes)
	}
	heads := map[fileID]bool{}
	for _, e := range entries {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(dir, "volumes", e.Name(), "head", "data"), &st); err == nil {
			heads[fileID{st.Dev, st.Ino}] = true
		}
	}
	return heads, nil
}

// ReleaseDevices detaches every loop device the bed's node agents left
// attached for sites -- the volumes first, whose files keep the pools'
// file systems busy, then the pools -- and looks again: it returns an
// error naming every device it could not release. scratch is a directory
// for the pools' read-only mounts while it looks. Nothing attached: nil.
func ReleaseDevices(ctx context.Context, scratch string, sites []string, log func(string, ...any)) error {
	pools, volumes, err := bedDevices(ctx, scratch, sites)
	if err != nil {
		return err
	}
	losetup := loop.Losetup{Cmder: nodeexec.Local{}}
	var errs []error
	for _, d := range append(volumes, pools...) {
		if err := losetup.Detach(ctx, d.Name); err != nil {
			errs = append(errs, fmt.Errorf("detach %s: %w", d, err))
			continue
		}
		log("detached %s", d)
	}
	pools, volumes, err = bedDevices(ctx, scratch, sites)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if left := append(volumes, pools...); len(left) > 0 {
		names := make([]string, len(left))
		for i, d := range left {
			names[i] = d.String()
		}
		errs = append(errs, fmt.Errorf("still attached after teardown: %s", strings.Join(names, ", ")))
	}
	return errors.Join(errs...)
}
