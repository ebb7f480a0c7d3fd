package leftovers_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/baton-dr/baton/node/leftovers"
	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/node/loop/looptest"
)

// A mounted loop device under a directory is found, and Scrub leaves
// nothing behind; what lives elsewhere is not touched.
func TestScrubRemovesTheMountsAndLoopDevicesUnderADirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("attaches a loop device and mounts it: needs root")
	}
	ctx := context.Background()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	image, mountPoint := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	for _, args := range [][]string{{"truncate", "-s", "32M", image}, {"mkfs.ext4", "-q", image}, {"mkdir", mountPoint}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	// Scrub detaches it; the cleanup only if it did not.
	loopDevice := looptest.Attach(t, image)
	elsewhere := filepath.Join(t.TempDir(), "other.img")
	if err := os.WriteFile(elsewhere, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	otherDevice := looptest.Attach(t, elsewhere)
	other, err := loop.Attachment(otherDevice)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", loopDevice, mountPoint).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mountPoint).Run() })

	loops, err := leftovers.Loops(ctx, dir)
	if err != nil || len(loops) != 1 || loops[0] != loopDevice {
		t.Fatalf("loops under %s: %v, %v; want [%s]", dir, loops, err, loopDevice)
	}
	mounts, err := leftovers.Mounts(dir)
	if err != nil || len(mounts) != 1 || mounts[0] != mountPoint {
		t.Fatalf("mounts under %s: %v, %v; want [%s]", dir, mounts, err, mountPoint)
	}
	if other, err := leftovers.Mounts(filepath.Join(dir, "elsewhere")); err != nil || len(other) != 0 {
		t.Fatalf("mounts under another directory: %v, %v", other, err)
	}
	m, l, err := leftovers.Scrub(ctx, dir)
	if err != nil || m != 1 || l != 1 {
		t.Fatalf("Scrub: %d mounts, %d loops, %v; want 1 and 1", m, l, err)
	}
	loops, _ = leftovers.Loops(ctx, dir)
	mounts, _ = leftovers.Mounts(dir)
	if len(loops)+len(mounts) > 0 {
		t.Fatalf("after Scrub: loops %v, mounts %v", loops, mounts)
	}
	if !other.StillAttached() {
		t.Fatalf("Scrub of %s detached %s, attached to a file elsewhere", dir, other)
	}
}
