package infra

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/node/loop/looptest"
)

// TestReleaseFindsACrashedBedsVolumesWhenItsPoolNoLongerMounts crashes a
// bed the way issue 16's earlier bed was left: a pool (btrfs on a loop
// device) with two volumes in subvolumes attached as loop devices, one of
// them fenced read-only, and a loop device over the other's (kubelet's
// block map); the pool lazily unmounted (umount -l) in a namespace that
// then dies, so the btrfs lives on in the kernel with no mount anywhere,
// held only by the volumes' open files. Then a second attachment of the
// pool's image -- what node/btrfs makes when it no longer recognises its
// image's loop device by path -- overwrites the image under the live
// file system (here with zeros past the superblock; a second btrfs
// instance's writes do the same), so a fresh mount of the image says
// "can't read superblock", and the image is deleted. ReleaseDevices must
// detach all five devices and leave no read-only flag behind.
//
// On main (c22b3ce) it failed as the 19:18 realbed-down did: "mount -o
// ro" of the pool's own device and of the second attachment both said
// "can't read superblock" (the live file system's mount searched its root
// tree for the default subvolume, whose leaf the kernel read again from
// the overwritten image), so the volumes were not found, and after 2 min
// "not released within 2m0s: <pool> ... [held by no process or device:
// a file system on it, or files open there]".
func TestReleaseFindsACrashedBedsVolumesWhenItsPoolNoLongerMounts(t *testing.T) {
	needLoopAndBtrfs(t)
	site, dir, image := newSitePool(t)
	mnt := filepath.Join(filepath.Dir(image), "mnt")
	// The filler makes the pool's file tree, and its root tree (a root item
	// per subvolume), more than their root nodes, which btrfs keeps in
	// memory: their leaves are read from the image again once the page
	// cache lets them go.
	script := `set -e
pool=$(losetup --find --show "$1")
mount "$pool" "$2"
mkdir -p "$2/volumes/vol-1" "$2/volumes/vol-2" "$2/filler"
seq 1 800 | sed "s|^|$2/filler/f|" | xargs touch
for i in $(seq 1 48); do btrfs -q subvolume create "$2/filler/s$i"; done
for v in vol-1 vol-2; do
	btrfs -q subvolume create "$2/volumes/$v/head"
	truncate -s 32M "$2/volumes/$v/head/data"
done
vol1=$(losetup --find --show "$2/volumes/vol-1/head/data")
vol2=$(losetup --find --show "$2/volumes/vol-2/head/data")
blockdev --setro "$vol2"
mapper=$(losetup --find --show "$vol1")
sync
umount -l "$2"
echo "$pool $vol1 $vol2 $mapper"`
	devices := strings.Fields(run(t, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", image, mnt))
	if len(devices) != 4 {
		t.Fatalf("the script attached %v", devices)
	}
	looptest.Hold(t, devices...)
	second := looptest.Attach(t, image)
	devices = append(devices, second)
	pool, vol1, vol2, kubeletMap := devices[0], devices[1], devices[2], devices[3]

	run(t, "dd", "if=/dev/zero", "of="+second, "bs=1M", "seek=1", "count=255", "conv=fsync", "status=none")
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh")
	if err := os.Mkdir(fresh, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "ro", second, fresh).CombinedOutput(); err == nil {
		exec.Command("umount", fresh).Run()
		t.Fatalf("a fresh mount of the overwritten image %s worked: not the crashed bed's state", second)
	} else if !strings.Contains(string(out), "can't read superblock") {
		t.Fatalf("a fresh mount of the overwritten image %s: %s; want the crashed bed's \"can't read superblock\"", second, out)
	}
	if err := os.Remove(image); err != nil {
		t.Fatal(err)
	}
	if got := backingOf(t, []string{pool})[0]; !strings.HasSuffix(got, poolSuffix(site)+" (deleted)") {
		t.Fatalf("sysfs shows %s as %q: not the form teardown meets", pool, got)
	}
	if fsid, err := liveBtrfsHolding(rdevOf(t, pool)); err != nil || fsid == "" {
		t.Fatalf("no live btrfs holds %s (%v): not the crashed bed's state", pool, err)
	}
	if readOnly(t, vol2) != "1" {
		t.Fatalf("%s is not read-only after blockdev --setro", vol2)
	}

	// The attachments by identity, while they are ours: once released,
	// their names are free for the next attach, another package's test's.
	ours := attachmentsOf(t, devices)

	var detached []string
	err := ReleaseDevices(context.Background(), dir, []string{site}, func(format string, args ...any) {
		t.Logf(format, args...)
		if strings.HasPrefix(format, "detached") {
			detached = append(detached, args[0].(loop.Device).Name)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if i, j := slices.Index(detached, kubeletMap), slices.Index(detached, vol1); i < 0 || j < 0 || i > j {
		t.Errorf("detached %v: want kubelet's map %s before the volume %s it holds", detached, kubeletMap, vol1)
	}
	if left := stillAttached(ours); len(left) > 0 {
		t.Errorf("still attached: %v", left)
	}
	for _, d := range ours {
		// A name attached again since is another's, and so is its flag.
		if _, err := loop.Attachment(d.Name); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if ro := readOnly(t, d.Name); ro != "0" {
			t.Errorf("%s left read-only (%s)", d.Name, ro)
		}
	}
	if out := run(t, "losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"); strings.Contains(out, site) {
		t.Errorf("losetup still lists the bed's devices:\n%s", out)
	}
}

func rdevOf(t *testing.T, device string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(device, &st); err != nil {
		t.Fatal(err)
	}
	return st.Rdev
}

// readOnly reads the device's read-only flag from sysfs.
func readOnly(t *testing.T, device string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(device), "ro"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}
