package btrfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec/exectest"
	"github.com/baton-dr/baton/storage/backend"
)

func TestProbeFilesystem(t *testing.T) {
	f := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"blkid -p -o export /dev/loop1": {Stdout: string(readTestdata(t, "blkid-btrfs.txt"))},
		// blkid prints nothing and exits 2 when it finds no signature.
		"blkid -p -o export /dev/loop2": {ExitCode: 2},
		"blkid -p -o export /dev/loop3": {ExitCode: 4, Stderr: "blkid: error: /dev/loop3: No such file or directory"},
	}}
	for _, c := range []struct{ device, want string }{{"/dev/loop1", "btrfs"}, {"/dev/loop2", ""}} {
		if got, err := probeFilesystem(context.Background(), f, c.device); err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.device, got, err, c.want)
		}
	}
	if got, err := probeFilesystem(context.Background(), f, "/dev/loop3"); err == nil {
		t.Errorf("a failing blkid reported %q", got)
	}
}

func TestFindMount(t *testing.T) {
	f := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"findmnt --json --output SOURCE,FSTYPE --mountpoint /a": {Stdout: string(readTestdata(t, "findmnt.json"))},
		// findmnt prints nothing and exits 1 when nothing is mounted there.
		"findmnt --json --output SOURCE,FSTYPE --mountpoint /b": {ExitCode: 1},
	}}
	if m, ok, err := findMount(context.Background(), f, "/a"); !ok || err != nil || m.source != "/dev/loop0" {
		t.Errorf("/a: %+v %v %v", m, ok, err)
	}
	if m, ok, err := findMount(context.Background(), f, "/b"); ok || err != nil {
		t.Errorf("/b: %+v %v %v, want nothing mounted", m, ok, err)
	}
}

// adoptionReplies scripts the tools for New over a directory whose image
// blkid finds holding fsType. The device is a name no host has: the pool's
// detach looks at the real kernel's device of that name and waits for it to
// go, which a real /dev/loop9 of another package's test would not.
func adoptionReplies(dir, fsType string) map[string]exectest.Reply {
	replies := map[string]exectest.Reply{
		"findmnt --json --output SOURCE,FSTYPE --mountpoint " + filepath.Join(dir, "mnt"): {ExitCode: 1},
		"losetup --find --show " + filepath.Join(dir, "pool.img"):                         {Stdout: "/dev/loop99991\n"},
		"losetup --detach /dev/loop99991":                                                 {},
		"blockdev --setrw /dev/loop99991":                                                 {},
		"mount -t btrfs -o noatime /dev/loop99991 " + filepath.Join(dir, "mnt"):           {},
		"mkfs.btrfs -q -L baton /dev/loop99991":                                           {},
		"btrfs subvolume list":                                                            {},
		"umount " + filepath.Join(dir, "mnt"):                                             {},
	}
	if fsType == "" {
		replies["blkid -p -o export /dev/loop99991"] = exectest.Reply{ExitCode: 2}
	} else {
		replies["blkid -p -o export /dev/loop99991"] = exectest.Reply{Stdout: "DEVNAME=/dev/loop99991\nTYPE=" + fsType + "\n"}
	}
	return replies
}

func TestNewFormatsOnlyABlankImage(t *testing.T) {
	for _, c := range []struct {
		found      string
		wantMkfs   bool
		wantRefuse bool
	}{
		{found: "", wantMkfs: true},
		{found: "btrfs"},
		{found: "ext4", wantRefuse: true},
	} {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f := &exectest.FakeCmder{Replies: adoptionReplies(dir, c.found)}
		p, err := New(Options{Dir: dir, SizeBytes: poolBytes, Cmder: f})
		calls := strings.Join(f.Calls(), "\n")
		if mkfs := strings.Contains(calls, "mkfs.btrfs"); mkfs != c.wantMkfs {
			t.Errorf("image holding %q: mkfs ran %v, want %v; calls:\n%s", c.found, mkfs, c.wantMkfs, calls)
		}
		if c.wantRefuse {
			if !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "holds ext4") {
				t.Errorf("an ext4 image: %v, want ErrInvalid", err)
			}
			if !slices.Contains(f.Calls(), "losetup --detach /dev/loop99991") {
				t.Errorf("a refused image stays attached; calls:\n%s", calls)
			}
			continue
		}
		if err != nil {
			t.Fatalf("image holding %q: %v; calls:\n%s", c.found, err, calls)
		}
		if info, err := os.Stat(filepath.Join(dir, "pool.img")); err != nil || info.Size() != poolBytes {
			t.Fatalf("the image: %v, %v", info, err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if last := f.Calls()[len(f.Calls())-1]; last != "losetup --detach /dev/loop99991" {
			t.Errorf("Close ended with %q, want the pool's loop device detached", last)
		}
	}
}

func TestNewWithoutImageOrSizeIsNotFound(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &exectest.FakeCmder{Replies: adoptionReplies(dir, "btrfs")}
	if _, err := New(Options{Dir: dir, Cmder: f}); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("New with neither image nor size: %v, want ErrNotFound", err)
	}
	if _, err := New(Options{Dir: dir, SizeBytes: 1 << 20, Cmder: f}); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("New with a 1 MiB image: %v, want ErrInvalid", err)
	}
	if _, err := New(Options{Dir: "relative", SizeBytes: poolBytes, Cmder: f}); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("New in a relative directory: %v, want ErrInvalid", err)
	}
}
