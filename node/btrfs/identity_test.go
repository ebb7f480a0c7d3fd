package btrfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// TestAnImageAttachedUnderAnotherNameIsNotAttachedTwice opens a pool whose
// image is already attached through another path -- as a restarted agent
// finds it when its previous container, the mount namespace that attached
// the image, is gone and the kernel names the file differently. The pool
// must take that device: attaching the image a second time gives the kernel
// two devices holding one btrfs, and from Linux 6.7 it mounts the second as a
// separate read-write instance writing the same image.
func TestAnImageAttachedUnderAnotherNameIsNotAttachedTwice(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	dir := t.TempDir()
	first, err := New(Options{Dir: dir, SizeBytes: poolBytes})
	must(t, err, "New")
	must(t, first.CreateVolume("v", 8*mib, backend.Thin), "CreateVolume")
	must(t, first.Close(), "Close")

	alias := t.TempDir()
	must(t, exec.Local{}.Command(ctx, "mount", "--bind", dir, alias).Run(), "bind mount")
	t.Cleanup(func() { must(t, exec.Local{}.Command(ctx, "umount", alias).Run(), "umount the alias") })
	losetup := loop.Losetup{Cmder: exec.Local{}}
	device, err := losetup.Attach(ctx, filepath.Join(alias, "pool.img"), false)
	must(t, err, "attach the image through the alias")
	image, err := os.Stat(filepath.Join(dir, "pool.img"))
	must(t, err, "stat the image")
	// The pool's Close detaches the device it took; without the fix it took
	// another, and this one is still there.
	detachAtEnd(t, device, image)

	p := newPoolIn(t, dir, 0)
	if _, err := p.Volume("v"); err != nil {
		t.Fatalf("the pool over the already attached image: %v", err)
	}
	if holding := devicesBacking(t, image); len(holding) != 1 || p.device != device {
		t.Fatalf("the image is attached as %v and the pool uses %s; want only %s, attached through %s",
			holding, p.device, device, alias)
	}
}

// TestAVolumeAttachedFromAGoneNamespaceIsAdopted opens a pool whose volume's
// head file a previous agent attached from a mount namespace that is gone
// (attached through a bind mount, then lazily unmounted: losetup shows the
// file as "/volumes/v/head/data"). The pool adopts that device, by the
// file's identity, instead of leaving it and attaching the file again: two
// devices over one file each cache its blocks, and the pool could never
// release the first.
func TestAVolumeAttachedFromAGoneNamespaceIsAdopted(t *testing.T) {
	needRoot(t)
	dir, headFile := crashedPoolWithVolume(t)
	device := attachFromAGoneNamespace(t, dir, "volumes/v/head/data", headFile)

	p := newPoolIn(t, dir, 0)
	if a, ok := p.attached["v"]; !ok || a.device != device {
		t.Fatalf("the pool's attachment of v: %+v (attached %v); want the device %s a gone namespace attached", a, ok, device)
	}
	// The volume's last Close detaches its device: the adopted one goes, and
	// no second one was attached beside it.
	pooltest.Write(t, p, "v", 0, []byte("one device"))
	if holding := devicesBacking(t, headFile); len(holding) != 0 {
		t.Fatalf("after the volume's last close its head file is still attached as %v", holding)
	}
}

// TestADestroyRefusesAVolumeAGoneNamespaceStillHolds: a second stale
// attachment of a volume's head file, made from a mount namespace that is
// gone, is not the pool's (it adopts one device a file); destroying the
// volume while it holds the file open must be refused, as for one the pool
// sees by path.
func TestADestroyRefusesAVolumeAGoneNamespaceStillHolds(t *testing.T) {
	needRoot(t)
	dir, headFile := crashedPoolWithVolume(t)
	first := attachFromAGoneNamespace(t, dir, "volumes/v/head/data", headFile)
	second := attachFromAGoneNamespace(t, dir, "volumes/v/head/data", headFile)

	p := newPoolIn(t, dir, 0)
	stale := second
	if a := p.attached["v"]; a != nil && a.device == second {
		stale = first
	}
	err := p.DestroyVolume("v")
	if !errors.Is(err, backend.ErrBusy) || !strings.Contains(err.Error(), stale) {
		t.Fatalf("destroying a volume %s still holds: %v, want ErrBusy naming it", stale, err)
	}
	// The stale device pins the pool's file system: let it go before the
	// pool's Close detaches the pool's own device.
	must(t, loop.Losetup{Cmder: exec.Local{}}.Detach(context.Background(), stale), "detach the stale "+stale)
}

// attachFromAGoneNamespace attaches the pool file at rel (under the pool's
// mount) the way an agent in a container that is gone did: through a bind
// mount, then lazily unmounted, so that losetup names the file relative to a
// mount that no longer exists. The device is detached at the test's end
// (detachAtEnd).
func attachFromAGoneNamespace(t *testing.T, dir, rel string, file os.FileInfo) string {
	t.Helper()
	ctx := context.Background()
	local := exec.Local{}
	alias := t.TempDir()
	must(t, local.Command(ctx, "mount", "--bind", filepath.Join(dir, "mnt"), alias).Run(), "bind mount")
	losetup := loop.Losetup{Cmder: local}
	device, err := losetup.Attach(ctx, filepath.Join(alias, rel), false)
	must(t, err, "attach "+rel+" through the alias")
	must(t, local.Command(ctx, "umount", "--lazy", alias).Run(), "lazily unmount the alias")
	detachAtEnd(t, device, file)
	return device
}

// detachAtEnd detaches a loop device at the test's end if it still holds
// file: the pool's Close may have detached it already, and its name may be
// another test's by then.
func detachAtEnd(t *testing.T, device string, file os.FileInfo) {
	t.Cleanup(func() {
		ctx := context.Background()
		devices, err := loop.List(ctx)
		must(t, err, "list loop devices")
		for _, d := range devices {
			if d.Name == device && d.Backs(file) {
				must(t, loop.Losetup{Cmder: exec.Local{}}.Detach(ctx, device), "detach "+device)
			}
		}
	})
}

// crashedPoolWithVolume makes a pool holding volume v and leaves it open, as
// an agent that died leaves it, and returns its directory and v's head file.
func crashedPoolWithVolume(t *testing.T) (string, os.FileInfo) {
	t.Helper()
	dir := t.TempDir()
	crashed, err := New(Options{Dir: dir, SizeBytes: poolBytes})
	must(t, err, "New")
	must(t, crashed.CreateVolume("v", 8*mib, backend.Thin), "CreateVolume")
	headFile, err := os.Stat(crashed.layout.data("v"))
	must(t, err, "stat the head file")
	return dir, headFile
}

// devicesBacking lists the loop devices whose backing file is file, by
// identity, each with the path sysfs shows.
func devicesBacking(t *testing.T, file os.FileInfo) []string {
	t.Helper()
	devices, err := loop.List(context.Background())
	must(t, err, "list loop devices")
	var holding []string
	for _, d := range devices {
		if d.Backs(file) {
			holding = append(holding, d.Name+" ("+d.BackFile+")")
		}
	}
	return holding
}
