package fence

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/loop/looptest"
)

// testMounts is the test process's mount namespace, where it mounts.
var testMounts = Namespace{Proc: "/proc/self"}

// run runs a command on this machine and returns its output, failing the
// test with its words.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Output(exec.Local{}.Command(context.Background(), name, args...))
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

// mountedLoop makes a file system of fsType on a loop device over a sparse
// file of the test's and mounts it in the test's namespace: the device's
// path and number, and the mount point. The cleanups unmount it (a
// shut-down file system unmounts) and then detach the device.
func mountedLoop(t *testing.T, fsType string, sizeBytes int64) (device string, rdev uint64, mountPoint string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("attaches a loop device and mounts it: run as root")
	}
	image := filepath.Join(t.TempDir(), fsType+".img")
	if err := os.WriteFile(image, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(image, sizeBytes); err != nil {
		t.Fatal(err)
	}
	device = looptest.Attach(t, image)
	if fsType == "xfs" {
		run(t, "mkfs.xfs", "-q", device)
	} else {
		run(t, "mkfs."+fsType, "-q", "-F", device)
	}
	mountPoint = t.TempDir()
	run(t, "mount", "-t", fsType, device, mountPoint)
	t.Cleanup(func() { run(t, "umount", mountPoint) })
	var st unix.Stat_t
	if err := unix.Stat(device, &st); err != nil {
		t.Fatal(err)
	}
	return device, st.Rdev, mountPoint
}

// openRootOf opens the root of the test's mount at mountPoint, closed at
// the end of the test.
func openRootOf(t *testing.T, mountPoint string) *os.File {
	t.Helper()
	root, err := os.Open(mountPoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = root.Close() })
	return root
}

// TestTheProbeSeesAShutDown: the xattr probe alone says an ext4 and an xfs
// are live while they are, and shut down once FS_IOC_SHUTDOWN (the fence's
// NOLOGFLUSH) stopped them, on a descriptor opened before the shutdown (xfs
// refuses new opens then). Linux 6.18 shows the ext4's shutdown in its
// super options too, so the probe is called here directly: on 6.1 it is the
// only sign (ci/vmtest/integration/fence_test.go checks it there).
func TestTheProbeSeesAShutDown(t *testing.T) {
	for _, c := range []struct {
		fsType    string
		sizeBytes int64
	}{
		{"ext4", 64 << 20},
		{"xfs", 320 << 20}, // mkfs.xfs 6.1 makes nothing below 300 MiB
	} {
		t.Run(c.fsType, func(t *testing.T) {
			_, _, mountPoint := mountedLoop(t, c.fsType, c.sizeBytes)
			root := openRootOf(t, mountPoint)
			if down, err := probeShutDown(root); down || err != nil {
				t.Fatalf("the probe of a live %s: down %v, %v; want live", c.fsType, down, err)
			}
			if supported, err := shutDown(root); !supported || err != nil {
				t.Fatalf("shutting down the %s: supported %v, %v", c.fsType, supported, err)
			}
			if down, err := probeShutDown(root); !down || err != nil {
				t.Fatalf("the probe of a shut-down %s: down %v, %v; want down", c.fsType, down, err)
			}
		})
	}
}

// TestAShutDownExt4ThatDoesNotSaySoIsSeen: an ext4 mount whose super
// options do not say "shutdown" -- what Linux 6.1 shows of a shut-down ext4,
// made here by taking the word out of the options 6.18 shows -- and whose
// root still opens is reported shut down, by the probe; the same mount of a
// live ext4 opens, as the fence needs it to.
func TestAShutDownExt4ThatDoesNotSaySoIsSeen(t *testing.T) {
	device, rdev, mountPoint := mountedLoop(t, "ext4", 64<<20)
	mounts, err := testMounts.mountsOf(rdev)
	if err != nil || len(mounts) != 1 {
		t.Fatalf("the mounts of %s: %v, %v; want the one at %s", device, mounts, err, mountPoint)
	}
	m := mounts[0]
	live, down, err := testMounts.openUnlessShutDown(m, rdev)
	if down || err != nil {
		t.Fatalf("the live ext4 on %s: down %v, %v; want its root open", device, down, err)
	}
	if supported, err := shutDown(live); !supported || err != nil {
		t.Fatalf("shutting down the ext4 on %s: supported %v, %v", device, supported, err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if mounts, err = testMounts.mountsOf(rdev); err != nil || len(mounts) != 1 {
		t.Fatalf("the mounts of %s once shut down: %v, %v", device, mounts, err)
	}
	m = mounts[0]
	options := strings.Split(m.VFSOptions, ",")
	t.Logf("the super options of the shut-down ext4: %s", m.VFSOptions)
	m.VFSOptions = strings.Join(slices.DeleteFunc(options, func(o string) bool { return o == "shutdown" }), ",")
	root, down, err := testMounts.openUnlessShutDown(m, rdev)
	if root != nil {
		_ = root.Close()
	}
	if !down || err != nil {
		t.Fatalf("the shut-down ext4 on %s, options %q: down %v, %v; want down", device, m.VFSOptions, down, err)
	}
}
