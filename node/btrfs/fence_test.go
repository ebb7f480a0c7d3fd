package btrfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/fence"
	"github.com/baton-dr/baton/storage/backend"
)

// testMounts is the test process's mount namespace.
var testMounts = fence.Namespace{Proc: "/proc/self"}

// run runs a command on this machine, failing the test with its output.
func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Output(exec.Local{}.Command(context.Background(), name, args...)); err != nil {
		t.Fatalf("%s %s: %v %s", name, strings.Join(args, " "), err, out)
	}
}

// stagedVolume creates a thin volume and stages it as the CSI node plugin
// does (csi/mount_linux.go): mkfs on its device, then mount of the device.
// The volume stays open, its loop device attached, until the test ends; the
// cleanups unmount it and close it whatever the test did to it.
func stagedVolume(t *testing.T, p *Pool, volume, fsType string, sizeBytes uint64) (device, mountPoint string) {
	t.Helper()
	// The test mounts in its own mount namespace, the one its fence must
	// look at; the node's, /proc/1, may be closed to it (a sandbox).
	p.mounts = testMounts
	must(t, p.CreateVolume(volume, sizeBytes, backend.Thin), "CreateVolume "+volume)
	dev, err := p.Open(volume)
	must(t, err, "Open "+volume)
	t.Cleanup(func() { must(t, dev.Close(), "Close "+volume) })
	p.mu.Lock()
	device = p.attached[volume].device
	p.mu.Unlock()
	switch fsType {
	case "xfs":
		run(t, "mkfs.xfs", "-q", device)
	case "btrfs":
		run(t, "mkfs.btrfs", "-q", device)
	default:
		run(t, "mkfs."+fsType, "-q", "-F", device)
	}
	mountPoint = t.TempDir()
	mountUntilEnd(t, device, mountPoint, fsType)
	return device, mountPoint
}

// mountUntilEnd mounts device on mountPoint until the test ends, unless the test
// unmounts it first (unmount).
func mountUntilEnd(t *testing.T, device, mountPoint, fsType string) {
	t.Helper()
	run(t, "mount", "-t", fsType, device, mountPoint)
	t.Cleanup(func() {
		if isMountPoint(t, mountPoint) {
			run(t, "umount", mountPoint)
		}
	})
}

// isMountPoint reports whether something is mounted on path, as findmnt sees it.
func isMountPoint(t testing.TB, path string) bool {
	t.Helper()
	err := exec.Local{}.Command(context.Background(), "findmnt", "--mountpoint", path).Run()
	return err == nil
}

// openForWrite opens a file of a mounted file system for writing until the
// test ends, and writes and syncs data into it: a write acknowledged before
// any fence.
func openForWrite(t *testing.T, path string, data []byte) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	must(t, err, "open "+path)
	t.Cleanup(func() { _ = f.Close() }) // a shut-down file system may fail the close
	if _, err := f.Write(data); err != nil {
		t.Fatalf("write to %s before the fence: %v", path, err)
	}
	must(t, f.Sync(), "fsync "+path+" before the fence")
	return f
}

// writeAndSync writes data and fsyncs: the error of the first that failed.
func writeAndSync(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// headDigest is the digest of a volume's bytes as its head file holds them,
// under its loop device: what reached the device.
func headDigest(t testing.TB, p *Pool, volume string) [sha256.Size]byte {
	t.Helper()
	f, err := os.Open(p.layout.data(volume))
	must(t, err, "open the head of "+volume)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	must(t, err, "read the head of "+volume)
	return [sha256.Size]byte(h.Sum(nil))
}

// TestFenceStopsAMountedFileSystem fences a volume under a mounted ext4 and
// xfs with a file open for writing, as a demoted member's application holds
// it. Nothing may reach the device after the fence: not the application's
// next write and fsync through the file system (EIO), not a raw write to the
// device (ErrRefused). The loop device's read-only flag alone stops only the
// second: on main's code the write and fsync through the file system succeed
// (Linux 6.18 warns "Trying to write to read-only block-device" and lets the
// file system's bios through). Lifting the fence over the still-mounted file
// system says it is shut down; once remounted, it holds every write
// acknowledged before the fence and takes writes again.
func TestFenceStopsAMountedFileSystem(t *testing.T) {
	for _, c := range []struct {
		fsType    string
		sizeBytes uint64
	}{
		{"ext4", 64 * mib},
		{"xfs", 320 * mib}, // mkfs.xfs 6.1 makes nothing below 300 MiB
	} {
		t.Run(c.fsType, func(t *testing.T) {
			p := newTestPool(t)
			device, mountPoint := stagedVolume(t, p, "v", c.fsType, c.sizeBytes)
			acknowledged := []byte("acknowledged before the fence\n")
			file := openForWrite(t, filepath.Join(mountPoint, "table"), acknowledged)

			must(t, p.SetReadOnly("v", true), "fence v")
			fenced := headDigest(t, p, "v")
			err := writeAndSync(file, []byte("written after the fence\n"))
			if err == nil {
				t.Fatalf("a write and fsync through the %s mounted from the fenced %s succeeded", c.fsType, device)
			}
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("a write through the fenced %s: %v, want EIO", c.fsType, err)
			}
			dev, err := p.Open("v")
			must(t, err, "Open the fenced v")
			if _, err := dev.WriteAt(make([]byte, 4096), 0); !errors.Is(err, backend.ErrRefused) {
				t.Errorf("a raw write to the fenced %s: %v, want ErrRefused", device, err)
			}
			must(t, dev.Close(), "Close")
			must(t, p.SetReadOnly("v", true), "fence v again")
			if headDigest(t, p, "v") != fenced {
				t.Errorf("%s's bytes changed after the fence", device)
			}

			err = p.SetReadOnly("v", false)
			if !errors.Is(err, fence.ErrStillShutDown) || !strings.Contains(err.Error(), mountPoint) {
				t.Fatalf("lifting the fence under the shut-down %s at %s: %v, want ErrStillShutDown naming it",
					c.fsType, mountPoint, err)
			}
			must(t, file.Close(), "close the file")
			run(t, "umount", mountPoint)
			must(t, p.SetReadOnly("v", false), "lift the fence once the file system is unmounted")
			mountUntilEnd(t, device, mountPoint, c.fsType)
			got, err := os.ReadFile(filepath.Join(mountPoint, "table"))
			must(t, err, "read the table back")
			if !bytes.Equal(got, acknowledged) {
				t.Errorf("after the remount the table holds %q, want the acknowledged %q only", got, acknowledged)
			}
			again := openForWrite(t, filepath.Join(mountPoint, "table"), []byte("after the remount\n"))
			must(t, again.Close(), "close")
		})
	}
}

// TestFenceOfAnUnmountedVolume: with nothing mounted from it, a fence is the
// read-only flag, as before: raw writes are refused until it is lifted, and
// a volume with no loop device keeps its fence for the next attach.
func TestFenceOfAnUnmountedVolume(t *testing.T) {
	p := newTestPool(t)
	must(t, p.CreateVolume("idle", 8*mib, backend.Thin), "CreateVolume idle")
	must(t, p.SetReadOnly("idle", true), "fence the volume without a loop device")
	must(t, p.CreateVolume("open", 8*mib, backend.Thin), "CreateVolume open")
	dev, err := p.Open("open")
	must(t, err, "Open")
	defer func() { must(t, dev.Close(), "Close") }()
	must(t, p.SetReadOnly("open", true), "fence the open volume")
	if _, err := dev.WriteAt(make([]byte, 4096), 0); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("a raw write to the fenced volume: %v, want ErrRefused", err)
	}
	must(t, p.SetReadOnly("open", false), "lift the fence")
	if _, err := dev.WriteAt(make([]byte, 4096), 0); err != nil {
		t.Fatalf("a raw write after the fence was lifted: %v", err)
	}
	idle, err := p.Open("idle")
	must(t, err, "Open idle")
	defer func() { must(t, idle.Close(), "Close idle") }()
	if _, err := idle.WriteAt(make([]byte, 4096), 0); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("a raw write to a volume fenced before its attach: %v, want ErrRefused", err)
	}
}

// TestFenceFailsOnAFileSystemWithoutShutdown: btrfs (Linux 6.18) has no
// FS_IOC_SHUTDOWN, and nothing else stops a mounted file system's writes, so
// the fence fails -- on every try -- naming the device, the type and the
// mount point, rather than report a fence that does not hold.
func TestFenceFailsOnAFileSystemWithoutShutdown(t *testing.T) {
	p := newTestPool(t)
	device, mountPoint := stagedVolume(t, p, "v", "btrfs", 128*mib)
	for range 2 {
		err := p.SetReadOnly("v", true)
		if !errors.Is(err, fence.ErrNoShutdown) {
			t.Fatalf("fencing under a mounted btrfs: %v, want ErrNoShutdown", err)
		}
		for _, want := range []string{device, "(btrfs)", mountPoint} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q does not name %s", err, want)
			}
		}
	}
}

// TestFenceFailsOnAMountItCannotSee: a node agent looking at a mount
// namespace without kubelet's mounts (its own container's, without hostPID)
// finds no mount of a device a file system holds. The fence fails then,
// naming the device, rather than set only the flag, which the file system
// would write through. The namespace is a stand-in /proc/<pid> directory
// whose mountinfo shows only a root.
func TestFenceFailsOnAMountItCannotSee(t *testing.T) {
	p := newTestPool(t)
	device, _ := stagedVolume(t, p, "v", "ext4", 64*mib)
	blind := t.TempDir()
	must(t, os.WriteFile(filepath.Join(blind, "mountinfo"), []byte("1 0 0:1 / / rw - rootfs rootfs rw\n"), 0o600), "write the stand-in mountinfo")
	p.mounts = fence.Namespace{Proc: blind}
	err := p.SetReadOnly("v", true)
	if !errors.Is(err, fence.ErrUnseenHolder) || !strings.Contains(err.Error(), device) {
		t.Fatalf("fencing a mounted device the namespace does not show: %v, want ErrUnseenHolder naming %s", err, device)
	}
	p.mounts = testMounts
	must(t, p.SetReadOnly("v", true), "fence v through the namespace that shows the mount")
}

// TestFenceLeavesAReadOnlyFileSystem: a file system mounted read-only (its
// superblock) writes nothing, and the read-only device keeps it so; the
// fence leaves it working for readers, and lifting the fence reports
// nothing shut down.
func TestFenceLeavesAReadOnlyFileSystem(t *testing.T) {
	p := newTestPool(t)
	_, mountPoint := stagedVolume(t, p, "v", "ext4", 64*mib)
	must(t, os.WriteFile(filepath.Join(mountPoint, "table"), []byte("row\n"), 0o600), "write the table")
	run(t, "mount", "-o", "remount,ro", mountPoint)
	must(t, p.SetReadOnly("v", true), "fence under a read-only ext4")
	if got, err := os.ReadFile(filepath.Join(mountPoint, "table")); err != nil || string(got) != "row\n" {
		t.Fatalf("reading under the fence: %q, %v", got, err)
	}
	remount := exec.Local{}.Command(context.Background(), "mount", "-o", "remount,rw", mountPoint)
	if err := remount.Run(); err == nil {
		t.Fatal("the read-only ext4 was remounted read-write under the fence")
	}
	must(t, p.SetReadOnly("v", false), "lift the fence")
}
