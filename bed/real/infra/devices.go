package infra

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

	"github.com/baton-dr/baton/node/loop"
)

// poolSuffix is the end of the path of a site's pool image, whatever the
// path shows before it: the node agent's --pool-dir is
// /var/lib/baton-realbed/<site>/pool (the chart's storage.hostDir, see install.go), a host directory
// bind-mounted into the node, so once the node's namespaces are gone
// sysfs shows "/<site>/pool/pool.img", "(deleted)" after it when run/ was
// removed. The site's name (baton-site-a) is the bed's alone.
func poolSuffix(site string) string { return "/" + site + "/pool/pool.img" }

// isPool tells whether the device backs one of sites' pools.
func isPool(d loop.Device, sites []string) bool {
	path := strings.TrimSuffix(d.BackFile, " (deleted)")
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
	Maps []loop.Device
	// Volumes are the pools' volumes' devices; Pools the pools'.
	Volumes, Pools []loop.Device
}

// All are the devices in the order teardown detaches them: the maps, whose
// open holds the volumes, then the volumes, whose files hold the pools.
func (l bedLoops) All() []loop.Device { return slices.Concat(l.Maps, l.Volumes, l.Pools) }

// bedDevices finds every loop device the bed's sites attached: the
// sites' pools by their image's path; each pool's volumes by identity
// (see livebtrfs.go: the live btrfs holding the pool is mounted read-only
// beside them for the time of the look, and a loop device is a volume
// when its backing file's (device, inode) is found there); and the loop
// devices attached over any of those (kubelet's maps), by the identity of
// the device node they are backed by. unanswered are devices that could
// not be asked (see loop.Scan). A pool that cannot be looked into is found
// all the same, with an error naming it.
func bedDevices(ctx context.Context, scratch string, sites []string) (found bedLoops, unanswered []string, err error) {
	all, unanswered, err := loop.Scan(ctx)
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
func mapsOver(all, devices []loop.Device) []loop.Device {
	var maps []loop.Device
	seen := map[string]bool{}
	for _, d := range devices {
		seen[d.Name] = true
	}
	for inner := devices; len(inner) > 0; {
		var outer []loop.Device
		for _, d := range all {
			if seen[d.Name] {
				continue
			}
			if slices.ContainsFunc(inner, func(in loop.Device) bool { return d.BackedBy(in.Node) }) {
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
func poolVolumes(ctx context.Context, scratch string, pool loop.Device, all []loop.Device) (found []loop.Device, err error) {
	fsid, err := liveBtrfsHolding(pool.Number)
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
		if heads[loop.FileID{Device: d.BackDevice, Inode: d.BackInode}] && !slices.ContainsFunc(found, func(f loop.Device) bool { return f.Name == d.Name }) {
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
func volumeHeads(root int, dir string) (map[loop.FileID]bool, error) {
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
	heads := map[loop.FileID]bool{}
	for _, e := range entries {
		if id, ok := fileBeneath(root, filepath.Join("volumes", e.Name(), "head", "data")); ok {
			heads[id] = true
		}
	}
	return heads, nil
}
