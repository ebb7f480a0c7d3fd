package integration

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dr/baton/node/fence"
	"github.com/baton-dr/baton/storage/backend"
)

// mountedExt4 makes an ext4 on device, mounts it on this node and opens a
// file on it that a writer holds, written and fsynced once: what a pod's
// volume is when its member is fenced.
func mountedExt4(t *testing.T, n *Node, device string) (*os.File, string) {
	t.Helper()
	_, err := n.Output("mkfs.ext4", "-q", "-F", device)
	must(t, err, "mkfs.ext4 %s", device)
	dir := t.TempDir()
	_, err = n.Output("mount", "-t", "ext4", device, dir)
	must(t, err, "mount %s", device)
	t.Cleanup(func() { _, _ = n.Output("umount", dir) })
	f, err := os.Create(filepath.Join(dir, "acknowledged"))
	must(t, err, "create on %s", device)
	t.Cleanup(func() { _ = f.Close() })
	_, err = f.Write([]byte("acknowledged before the fence\n"))
	must(t, err, "write before the fence")
	must(t, f.Sync(), "fsync before the fence")
	return f, dir
}

// wantFenced checks that the writer of a fenced device can make nothing
// durable and that the device's bytes stay as the fence left them.
func wantFenced(t *testing.T, n *Node, device string, f *os.File) {
	t.Helper()
	before := deviceSum(t, n, device)
	_, werr := f.Write(bytes.Repeat([]byte("after the fence\n"), 4096))
	serr := f.Sync()
	if werr == nil && serr == nil {
		t.Fatalf("a write and fsync on the ext4 of %s succeeded after the fence", device)
	}
	t.Logf("after the fence of %s: write %v, fsync %v", device, werr, serr)
	if after := deviceSum(t, n, device); after != before {
		t.Fatalf("%s changed after the fence: md5 %s, then %s", device, before, after)
	}
}

func deviceSum(t *testing.T, n *Node, device string) string {
	t.Helper()
	out, err := n.Output("md5sum", device)
	must(t, err, "md5sum %s", device)
	return string(bytes.Fields(out)[0])
}

// The hole the bed found on btrfs, on ZFS 2.1: readonly=on is read only at
// a zvol's first open and the device's read-only flag does not stop the
// bios of a mounted file system. SetReadOnly fences the zvol's device
// (package fence): the mounted ext4 is shut down and the zvol's bytes stay.
// Lifting the fence while it is mounted says it is still shut down, and it
// is: it writes nothing. Once it is unmounted, the fence lifts and what was
// acknowledged before it reads back.
func TestFencedZvolStopsItsMountedExt4(t *testing.T) {
	g := needGuests(t)
	a := g.Nodes[0]
	const name = "it-fence-zvol"
	must(t, a.Pool.CreateVolume(name, 64*mib, backend.Thin), "CreateVolume")
	t.Cleanup(func() { _ = a.Pool.SetReadOnly(name, false); _ = a.Pool.DestroyVolume(name) })
	device := a.Pool.DevicePath(name)
	await(t, "the zvol's device", func() bool { _, err := os.Stat(device); return err == nil })
	f, dir := mountedExt4(t, a, device)
	must(t, a.Pool.SetReadOnly(name, true), "SetReadOnly on a zvol with a mounted ext4")
	wantFenced(t, a, device, f)
	must(t, a.Pool.SetReadOnly(name, true), "SetReadOnly again (idempotent)")
	// Linux 6.1's ext4 does not say it is shut down (the "shutdown" super
	// option came later) and still opens its root; it refuses an xattr get
	// of the root with EIO, which is how Lift sees it (node/fence/probe.go).
	if err := a.Pool.SetReadOnly(name, false); !errors.Is(err, fence.ErrStillShutDown) {
		t.Fatalf("lifting the fence while the shut-down ext4 is mounted: %v; want ErrStillShutDown", err)
	}
	// The lift cleared the flags, and the file system is what stops the
	// writer still: it stays shut down while it is mounted.
	wantFenced(t, a, device, f)
	must(t, a.Pool.SetReadOnly(name, true), "the fence again")
	_ = f.Close()
	_, err := a.Output("umount", dir)
	must(t, err, "umount")
	must(t, a.Pool.SetReadOnly(name, false), "lifting the fence once unmounted")
	_, err = a.Output("mount", "-t", "ext4", device, dir)
	must(t, err, "mount again")
	got, err := os.ReadFile(filepath.Join(dir, "acknowledged"))
	must(t, err, "read back")
	if string(got) != "acknowledged before the fence\n" {
		t.Fatalf("after the fence and a remount the file holds %q", got)
	}
}

// DRBD refuses to demote a Primary whose device is mounted, and the mounted
// ext4 writes on through /dev/drbdN. The agent fences the DRBD device
// first: its ext4 is shut down and the device's bytes stay. DRBD still
// refuses Secondary until the unmount. The zvol under it is held by DRBD
// (sysfs holders): its fence passes once its holder is fenced with no live
// mount -- read-only, its ext4 shut down, which Linux 6.1's ext4 shows only
// by refusing an xattr get (node/fence/probe.go) -- so before the unmount
// too; after the unmount DRBD demotes and the zvol's fence passes again.
func TestFencedDRBDDeviceStopsItsMountedExt4BeforeSecondary(t *testing.T) {
	g := needGuests(t)
	const name, minor = "it-fence-drbd", 2010
	upPair(t, g, name, 64*mib, minor, 7110)
	skipInitialSync(t, g, name)
	a := g.Nodes[0]
	must(t, a.DRBD.Primary(name, false), "Primary on %s", a.Name)
	device := "/dev/drbd2010"
	f, dir := mountedExt4(t, a, device)
	must(t, a.DRBD.FenceDevice(name, true), "FenceDevice on a Primary with a mounted ext4")
	wantFenced(t, a, device, f)
	must(t, a.Pool.SetReadOnly(name, true), "SetReadOnly on the zvol under the fenced, mounted DRBD device")
	if err := a.DRBD.Secondary(name); err == nil {
		t.Fatalf("DRBD demoted a Primary whose device is mounted")
	}
	_ = f.Close()
	_, err := a.Output("umount", dir)
	must(t, err, "umount")
	must(t, a.DRBD.Secondary(name), "Secondary once unmounted")
	must(t, a.Pool.SetReadOnly(name, true), "SetReadOnly on the zvol under its Secondary DRBD device")
}
