package btrfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/storage/backend"
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
	// another, and this one is still there. Detach it only while it still
	// holds this image: its name may be another test's by then.
	t.Cleanup(func() {
		devices, err := losetup.List(ctx)
		must(t, err, "list loop devices")
		for _, d := range devices {
			if d.Name == device && d.Backs(image) {
				must(t, losetup.Detach(ctx, device), "detach "+device)
			}
		}
	})

	p := newPoolIn(t, dir, 0)
	if _, err := p.Volume("v"); err != nil {
		t.Fatalf("the pool over the already attached image: %v", err)
	}
	devices, err := losetup.List(ctx)
	must(t, err, "list loop devices")
	var holding []string
	for _, d := range devices {
		if d.Backs(image) {
			holding = append(holding, d.Name+" ("+d.BackFile+")")
		}
	}
	if len(holding) != 1 || p.device != device {
		t.Fatalf("the image is attached as %v and the pool uses %s; want only %s, attached through %s",
			holding, p.device, device, alias)
	}
}
