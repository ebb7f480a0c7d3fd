package infra

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/node/loop/looptest"
)

// needLoopAndBtrfs skips unless the test can attach loop devices and make
// btrfs file systems: root and the tools.
func needLoopAndBtrfs(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: loop devices and mounts")
	}
	for _, tool := range []string{"losetup", "mkfs.btrfs", "btrfs", "unshare", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestReleaseFindsAVolumeLeftByAUsersClaimAfterItsNamespaceDied is issue
// 16's teardown, without kind: a site's pool (btrfs on a loop device) and
// a user's volume in it (a loop device on the volume's head file, ext4 on
// it and mounted, as a claim is) and a loop device attached over the
// volume's device node, as kubelet maps every block volume a pod holds,
// all made in a mount namespace that then dies -- as a node container's
// do -- and the pool's image deleted, as removing run/ does. sysfs then
// shows "/<site>/pool/pool.img (deleted)", "/volumes/<v>/head/data" and
// the map's backing file by its device node: ReleaseDevices must find and
// detach all three, kubelet's map first (it holds the volume's device
// open, which holds the pool's file system), and leave none attached.
// Before it did (the lead's run of ci/realbed/teardown-test.sh), each
// held device took node/loop's whole 30 s wait for the kernel and then
// failed, the in-flight `losetup --list` killed by that wait's deadline.
func TestReleaseFindsAVolumeLeftByAUsersClaimAfterItsNamespaceDied(t *testing.T) {
	needLoopAndBtrfs(t)
	site, dir, image := newSitePool(t)
	poolDir := filepath.Dir(image)
	// In a private mount namespace that ends with the script: the pool
	// attached and mounted, a volume's head subvolume and file, the
	// volume attached, formatted and mounted as a user's claim would be.
	script := `set -e
pool=$(losetup --find --show "$1")
mount "$pool" "$2"
mkdir -p "$2/volumes/vol-1" "$2/claim"
btrfs -q subvolume create "$2/volumes/vol-1/head"
truncate -s 64M "$2/volumes/vol-1/head/data"
volume=$(losetup --find --show "$2/volumes/vol-1/head/data")
mkfs.ext4 -q "$volume"
mount "$volume" "$2/claim"
mapper=$(losetup --find --show "$volume")
echo "$pool $volume $mapper"`
	devices := strings.Fields(run(t, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", image,
		filepath.Join(poolDir, "mnt")))
	if len(devices) != 3 {
		t.Fatalf("the script attached %v", devices)
	}
	looptest.Hold(t, devices...)
	if err := os.Remove(image); err != nil {
		t.Fatal(err)
	}
	before := backingOf(t, devices)
	if !strings.HasSuffix(before[0], poolSuffix(site)+" (deleted)") || !strings.HasPrefix(before[1], "/volumes/vol-1/head/data") {
		t.Fatalf("sysfs shows %q: not the forms teardown meets", before)
	}
	// The three attachments by identity, while they are ours: once
	// released, their names are free for the next attach, which may be a
	// test's running beside this one.
	ours := attachmentsOf(t, devices)

	var detached []string
	err := ReleaseDevices(context.Background(), dir, []string{site}, func(format string, args ...any) {
		if strings.HasPrefix(format, "detached") {
			detached = append(detached, args[0].(loop.Device).Name)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	pool, volume, kubeletMap := devices[0], devices[1], devices[2]
	if want := []string{kubeletMap, volume, pool}; !slices.Equal(detached, want) {
		t.Errorf("detached %v, want kubelet's map %s, the volume %s, then the pool %s", detached, kubeletMap, volume, pool)
	}
	if left := stillAttached(ours); len(left) > 0 {
		t.Errorf("still attached: %v", left)
	}
	if out := run(t, "losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"); strings.Contains(out, site) {
		t.Errorf("losetup still lists the bed's devices:\n%s", out)
	}
}

// attachmentsOf reads the named devices' attachments now, each with the
// disk sequence number that names it.
func attachmentsOf(t *testing.T, names []string) []loop.Device {
	t.Helper()
	var out []loop.Device
	for _, name := range names {
		d, err := loop.Attachment(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// stillAttached are those of devices still the attachment they were (see
// loop.Device.StillAttached): a name attached to something else since is
// another's.
func stillAttached(devices []loop.Device) []loop.Device {
	return slices.DeleteFunc(slices.Clone(devices), func(d loop.Device) bool { return !d.StillAttached() })
}

// newSitePool lays out a site of the test's own under a temp dir as the
// bed does -- <dir>/<site>/pool/pool.img, a 256 MiB btrfs, and an empty
// mnt beside it -- and returns the three. The site's name is random, never
// the real bed's: teardown is pointed at it alone.
func newSitePool(t *testing.T) (site, dir, image string) {
	t.Helper()
	site = "baton-test-" + randomID(t)
	dir = t.TempDir()
	poolDir := filepath.Join(dir, site, "pool")
	if err := os.MkdirAll(filepath.Join(poolDir, "mnt"), 0o700); err != nil {
		t.Fatal(err)
	}
	image = filepath.Join(poolDir, "pool.img")
	run(t, "truncate", "-s", "256M", image)
	run(t, "mkfs.btrfs", "-q", image)
	return site, dir, image
}

// randomID is a random part of a test's site name, so that a teardown the
// test points at its own site never meets a real bed's.
func randomID(t *testing.T) string {
	t.Helper()
	id := make([]byte, 4)
	if _, err := rand.Read(id); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(id)
}

// attachedPool lays out <dir>/<site>/pool/pool.img, a sparse file of size
// (as truncate reads it: "64M") where the bed keeps a site's pool, and
// attaches a loop device to it until the test ends.
func attachedPool(t *testing.T, dir, site, size string) (image, device string) {
	t.Helper()
	poolDir := filepath.Join(dir, site, "pool")
	if err := os.MkdirAll(poolDir, 0o700); err != nil {
		t.Fatal(err)
	}
	image = filepath.Join(poolDir, "pool.img")
	run(t, "truncate", "-s", size, image)
	return image, looptest.Attach(t, image)
}

// backingOf reads each device's backing file from sysfs; "" if detached.
func backingOf(t *testing.T, devices []string) []string {
	t.Helper()
	out := make([]string, len(devices))
	for i, d := range devices {
		data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(d), "loop", "backing_file"))
		if err == nil {
			out[i] = strings.TrimSpace(string(data))
		}
	}
	return out
}

// TestReleaseLeavesOtherLoopDevicesAlone: a pool-looking file of a site
// whose name ends like the bed's is another user's. Never the real bed's
// site names here: the test would release a running bed's devices.
func TestReleaseLeavesOtherLoopDevicesAlone(t *testing.T) {
	needLoopAndBtrfs(t)
	dir := t.TempDir()
	other := "test-" + randomID(t)
	image, device := attachedPool(t, dir, other, "128M")
	if err := ReleaseDevices(context.Background(), dir, []string{"baton-" + other}, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	if left := backingOf(t, []string{device}); left[0] != image {
		t.Errorf("%s now backs %q; teardown took a device that is not the bed's", device, left[0])
	}
}

// TestReleaseNamesWhatHoldsADevice holds a pool-looking device open (this
// process, as any holder would) through a teardown with a short deadline:
// the error must name the device and this process, and the device must
// go once the holder closes it (the detach marked it to clear then).
func TestReleaseNamesWhatHoldsADevice(t *testing.T) {
	needLoopAndBtrfs(t)
	site := "baton-test-" + randomID(t)
	dir := t.TempDir()
	_, device := attachedPool(t, dir, site, "64M")
	held := attachmentsOf(t, []string{device})[0]
	holder, err := os.Open(device)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err = ReleaseDevices(ctx, dir, []string{site}, func(string, ...any) {})
	want := fmt.Sprintf("process %d (", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), device) || !strings.Contains(err.Error(), want) {
		t.Fatalf("releasing a device held open: %v; want an error naming %s and %q", err, device, want)
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if left := loop.AwaitCleared(wait, 50*time.Millisecond, held); len(left) > 0 {
		t.Fatalf("%s is still attached a minute after its holder closed it", device)
	}
}

// TestMapsOverFindsMapsOfMapsOutermostFirst: a loop device over the
// volume's device node, and one over that one's, are both the bed's, the
// outer one first; a device over another file is not.
func TestMapsOverFindsMapsOfMapsOutermostFirst(t *testing.T) {
	volume := loop.Device{Name: "/dev/loop1", BackDevice: 40, BackInode: 257, Node: loop.FileID{Device: 6, Inode: 94}}
	inner := loop.Device{Name: "/dev/loop2", BackDevice: 6, BackInode: 94, Node: loop.FileID{Device: 6, Inode: 95}}
	outer := loop.Device{Name: "/dev/loop3", BackDevice: 6, BackInode: 95, Node: loop.FileID{Device: 6, Inode: 96}}
	other := loop.Device{Name: "/dev/loop4", BackDevice: 6, BackInode: 97, Node: loop.FileID{Device: 6, Inode: 98}}
	got := mapsOver([]loop.Device{volume, inner, outer, other}, []loop.Device{volume})
	if len(got) != 2 || got[0].Name != outer.Name || got[1].Name != inner.Name {
		t.Errorf("maps over %s: %v, want %s then %s", volume.Name, got, outer.Name, inner.Name)
	}
}
