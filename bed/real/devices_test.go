package real

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
// it and mounted, as a claim is), all made in a mount namespace that then
// dies -- as a node container's do -- and the pool's image deleted, as
// removing run/ does. sysfs then shows "/<site>/pool/pool.img (deleted)"
// and "/volumes/<v>/head/data": ReleaseDevices must find and detach both,
// and no loop device backed by either may be left.
func TestReleaseFindsAVolumeLeftByAUsersClaimAfterItsNamespaceDied(t *testing.T) {
	needLoopAndBtrfs(t)
	id := make([]byte, 4)
	if _, err := rand.Read(id); err != nil {
		t.Fatal(err)
	}
	site := "baton-test-" + hex.EncodeToString(id)
	dir := t.TempDir()
	poolDir := filepath.Join(dir, site, "pool")
	if err := os.MkdirAll(filepath.Join(poolDir, "mnt"), 0o700); err != nil {
		t.Fatal(err)
	}
	image := filepath.Join(poolDir, "pool.img")
	run(t, "truncate", "-s", "256M", image)
	run(t, "mkfs.btrfs", "-q", image)
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
echo "$pool $volume"`
	devices := strings.Fields(run(t, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", image,
		filepath.Join(poolDir, "mnt")))
	if len(devices) != 2 {
		t.Fatalf("the script attached %v", devices)
	}
	t.Cleanup(func() {
		for _, d := range devices {
			exec.Command("losetup", "--detach", d).Run()
		}
	})
	if err := os.Remove(image); err != nil {
		t.Fatal(err)
	}
	before := backingOf(t, devices)
	if !strings.HasSuffix(before[0], poolSuffix(site)+" (deleted)") || !strings.HasPrefix(before[1], "/volumes/vol-1/head/data") {
		t.Fatalf("sysfs shows %q: not the forms teardown meets", before)
	}

	var detached []string
	err := ReleaseDevices(context.Background(), dir, []string{site}, func(format string, args ...any) {
		detached = append(detached, args[0].(loopDevice).Name)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(detached) != 2 || detached[0] != devices[1] || detached[1] != devices[0] {
		t.Errorf("detached %v, want the volume %s then the pool %s", detached, devices[1], devices[0])
	}
	if left := backingOf(t, devices); left[0] != "" || left[1] != "" {
		t.Errorf("still attached: %q", left)
	}
	if out := run(t, "losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"); strings.Contains(out, site) ||
		strings.Contains(out, "/volumes/vol-1/head/data") && strings.Contains(out, devices[1]+" ") {
		t.Errorf("losetup still lists the bed's devices:\n%s", out)
	}
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

func TestReleaseLeavesOtherLoopDevicesAlone(t *testing.T) {
	needLoopAndBtrfs(t)
	dir := t.TempDir()
	// Another user's pool-looking file: same layout, a site not the bed's.
	poolDir := filepath.Join(dir, "site-a", "pool")
	if err := os.MkdirAll(poolDir, 0o700); err != nil {
		t.Fatal(err)
	}
	image := filepath.Join(poolDir, "pool.img")
	run(t, "truncate", "-s", "128M", image)
	device := run(t, "losetup", "--find", "--show", image)
	t.Cleanup(func() { exec.Command("losetup", "--detach", device).Run() })
	if err := ReleaseDevices(context.Background(), dir, []string{"baton-site-a"}, func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	if left := backingOf(t, []string{device}); left[0] != image {
		t.Errorf("%s now backs %q; teardown took a device that is not the bed's", device, left[0])
	}
}
