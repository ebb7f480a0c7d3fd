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
	"time"

	"golang.org/x/sys/unix"
)

// loopDevice is one attached loop device as the host's kernel reports it.
type loopDevice struct {
	Name string // "/dev/loop3"
	// Backing is the backing file's path as sysfs shows it: the path in
	// the mount namespace that attached it while that lives, the path from
	// the mount's own root once the namespace is gone ("/" for a device
	// node bind-mounted on its own), with " (deleted)" once the file is
	// removed.
	Backing string
	// Dev and Inode identify the backing file whatever its path shows:
	// its file system's device number and its inode (LOOP_GET_STATUS64).
	Dev, Inode uint64
	// Node identifies the device's own node in the host's /dev, which the
	// kind nodes mount: a loop device attached over this one (kubelet's
	// map of a block volume) shows it as its backing identity.
	Node fileID
	// Rdev is the device number, as a process holding it open shows it.
	Rdev uint64
}

func (d loopDevice) String() string { return fmt.Sprintf("%s (%s)", d.Name, d.Backing) }

// backs tells whether d is attached over the file id names.
func (d loopDevice) backs(id fileID) bool { return d.Dev == id.dev && d.Inode == id.inode }

type fileID struct{ dev, inode uint64 }

// openLimit bounds opening one loop device to ask what backs it. An open
// waits while the kernel runs a device down (its last close flushing to
// the backing file), which on a loaded host can take a while; a device
// that does not answer within the limit is named, and looked at again
// later, instead of hanging the teardown.
const openLimit = 20 * time.Second

// listLoops lists every attached loop device of the host, sorted by name,
// reading sysfs and asking each device (LOOP_GET_STATUS64) -- no losetup,
// whose processes a loaded host starts slowly. unanswered names the
// devices whose open did not return within openLimit.
func listLoops(ctx context.Context) (devices []loopDevice, unanswered []string, err error) {
	files, err := filepath.Glob("/sys/block/loop*/loop/backing_file")
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		backing, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // detached between the glob and the read
		}
		if err != nil {
			return nil, nil, err
		}
		name := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(f)))
		d := loopDevice{Name: name, Backing: strings.TrimSuffix(string(backing), "\n")}
		var st unix.Stat_t
		if err := unix.Stat(name, &st); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		d.Node, d.Rdev = fileID{st.Dev, st.Ino}, st.Rdev
		d.Dev, d.Inode, err = backingIdentity(name)
		switch {
		case errors.Is(err, unix.ENXIO):
			continue // detached meanwhile, or being run down
		case errors.Is(err, errOpenBlocked):
			unanswered = append(unanswered, name)
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		devices = append(devices, d)
	}
	slices.SortFunc(devices, func(a, b loopDevice) int { return strings.Compare(a.Name, b.Name) })
	return devices, unanswered, nil
}

var errOpenBlocked = fmt.Errorf("its open did not return within %s", openLimit)

// backingIdentity asks the loop driver which file backs the device.
func backingIdentity(device string) (dev, inode uint64, err error) {
	err = withOpen(device, unix.O_RDONLY, func(fd int) error {
		info, err := unix.IoctlLoopGetStatus64(fd)
		if err == nil {
			dev, inode = info.Device, info.Inode
		}
		return err
	})
	return dev, inode, err
}

// withOpen opens the device, runs f on it and closes it, giving up after
// openLimit (the call then finishes on its own, unwaited for).
func withOpen(device string, flags int, f func(fd int) error) error {
	done := make(chan error, 1)
	go func() {
		fd, err := unix.Open(device, flags|unix.O_CLOEXEC, 0)
		if err != nil {
			done <- err
			return
		}
		defer unix.Close(fd)
		done <- f(fd)
	}()
	timer := time.NewTimer(openLimit)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return errOpenBlocked
	}
}

// poolSuffix is the end of the path of a site's pool image, whatever the
// path shows before it: the node agent's --pool-dir is
// /var/lib/baton-realbed/<site>/pool (the chart's storage.hostDir, see install.go), a host directory
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

// bedLoops are the loop devices the bed's sites attached.
type bedLoops struct {
	// Maps are loop devices attached over one of the bed's devices: kubelet
	// maps every block-mode volume a pod holds by attaching a loop device
	// over the published device node, which keeps the volume's device open
	// (and so its pool's file system busy) until it goes itself.
	Maps []loopDevice
	// Volumes are the pools' volumes' devices; Pools the pools'.
	Volumes, Pools []loopDevice
}

// All are the devices in the order teardown detaches them: the maps, whose
// open holds the volumes, then the volumes, whose files hold the pools.
func (l bedLoops) All() []loopDevice { return slices.Concat(l.Maps, l.Volumes, l.Pools) }

// bedDevices finds every loop device the bed's sites attached: the
// sites' pools by their image's path; each pool's volumes by identity
// (see livebtrfs.go: the live btrfs holding the pool is mounted read-only
// beside them for the time of the look, and a loop device is a volume
// when its backing file's (device, inode) is found there); and the loop
// devices attached over any of those (kubelet's maps), by the identity of
// the device node they are backed by. unanswered are devices that could
// not be asked (see listLoops). A pool that cannot be looked into is found
// all the same, with an error naming it.
func bedDevices(ctx context.Context, scratch string, sites []string) (found bedLoops, unanswered []string, err error) {
	all, unanswered, err := listLoops(ctx)
	if err != nil {
		return found, nil, err
	}
	for _, d := range all {
		if isPool(d, sites) {
			found.Pools = append(found.Pools, d)
		}
	}
	var errs []error
	volumes := map[string]bool{}
	for _, pool := range found.Pools {
		in, err := poolVolumes(ctx, scratch, pool, all)
		if err != nil {
			// Still the bed's pool, to release: only (some of) its
			// volumes are not known.
			errs = append(errs, fmt.Errorf("looking into pool %s: %w", pool, err))
		}
		for _, d := range in {
			volumes[d.Name] = true
		}
	}
	for _, d := range all {
		if volumes[d.Name] {
			found.Volumes = append(found.Volumes, d)
		}
	}
	found.Maps = mapsOver(all, slices.Concat(found.Volumes, found.Pools))
	return found, unanswered, errors.Join(errs...)
}

// mapsOver finds the loop devices attached over any of devices, and over
// those in turn, outermost first.
func mapsOver(all, devices []loopDevice) []loopDevice {
	var maps []loopDevice
	seen := map[string]bool{}
	for _, d := range devices {
		seen[d.Name] = true
	}
	for inner := devices; len(inner) > 0; {
		var outer []loopDevice
		for _, d := range all {
			if seen[d.Name] {
				continue
			}
			if slices.ContainsFunc(inner, func(in loopDevice) bool { return d.backs(in.Node) }) {
				seen[d.Name] = true
				outer = append(outer, d)
			}
		}
		maps = append(outer, maps...)
		inner = outer
	}
	return maps
}

// maxVolumes bounds the walk of one pool's volumes directory.
const maxVolumes = 4096

// poolVolumes finds the loop devices among all backed by files in the
// pool's btrfs. A pool no live btrfs holds has none, and is not mounted
// (livebtrfs.go says why); one that a live btrfs holds is mounted
// read-only by that device in scratch, each device looked up along its
// backing path there, and the volumes directory of node/btrfs's layout
// (volumes/<dataset>/head/data) walked too, for a device whose path does
// not lead there. Devices found by either way are returned even when the
// other failed.
func poolVolumes(ctx context.Context, scratch string, pool loopDevice, all []loopDevice) (found []loopDevice, err error) {
	fsid, err := liveBtrfsHolding(pool.Rdev)
	if err != nil || fsid == "" {
		return nil, err
	}
	dir, err := os.MkdirTemp(scratch, "pool-")
	if err != nil {
		return nil, err
	}
	defer os.Remove(dir)
	if out, err := exec.CommandContext(ctx, "mount", "-t", "btrfs", "-o", "ro,subvolid=5", pool.Name, dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mount -o ro %s, held by live btrfs %s: %w: %s", pool.Name, fsid, err, strings.TrimSpace(string(out)))
	}
	defer func() {
		if out, umountErr := exec.Command("umount", dir).CombinedOutput(); umountErr != nil {
			err = errors.Join(err, fmt.Errorf("umount %s: %w: %s", dir, umountErr, strings.TrimSpace(string(out))))
		}
	}()
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	found = volumesByPath(root, all)
	heads, err := volumeHeads(root, dir)
	for _, d := range all {
		if heads[fileID{d.Dev, d.Inode}] && !slices.ContainsFunc(found, func(f loopDevice) bool { return f.Name == d.Name }) {
			found = append(found, d)
		}
	}
	if err != nil {
		err = fmt.Errorf("walking the volumes of live btrfs %s: %w", fsid, err)
	}
	return found, err
}

// volumeHeads returns the identities of the head files of the volumes in
// the pool mounted at dir, opened as root.
func volumeHeads(root int, dir string) (map[fileID]bool, error) {
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
		if id, ok := fileBeneath(root, filepath.Join("volumes", e.Name(), "head", "data")); ok {
			heads[id] = true
		}
	}
	return heads, nil
}
