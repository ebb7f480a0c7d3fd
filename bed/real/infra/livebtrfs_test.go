package infra

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/loop"
)

// TestVolumesByPathMatchesTheFileNotTheName: a loop device is the pool's
// when a suffix of its backing path leads, beneath the pool's mount, to
// the very file backing it; a file of the same name that is another
// inode, or a symlink in the pool to the device's real file elsewhere,
// must not make another user's device the pool's.
func TestVolumesByPathMatchesTheFileNotTheName(t *testing.T) {
	pool, elsewhere := t.TempDir(), t.TempDir()
	head := filepath.Join(pool, "volumes", "vol-1", "head")
	if err := os.MkdirAll(head, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(path string) loop.FileID {
		t.Helper()
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		return loop.FileID{Device: st.Dev, Inode: st.Ino}
	}
	data := write(filepath.Join(head, "data"))
	other := write(filepath.Join(elsewhere, "other.img"))
	if err := os.Symlink(filepath.Join(elsewhere, "other.img"), filepath.Join(pool, "other.img")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(pool, "linked")); err != nil {
		t.Fatal(err)
	}
	sameName := write(filepath.Join(elsewhere, "data"))

	volume := loop.Device{Name: "/dev/loop1", BackFile: "/var/lib/node/pool/mnt/volumes/vol-1/head/data", BackDevice: data.Device, BackInode: data.Inode}
	deleted := loop.Device{Name: "/dev/loop2", BackFile: "/volumes/vol-1/head/data (deleted)", BackDevice: data.Device, BackInode: data.Inode}
	linked := loop.Device{Name: "/dev/loop3", BackFile: "/srv/other.img", BackDevice: other.Device, BackInode: other.Inode}
	throughDir := loop.Device{Name: "/dev/loop4", BackFile: "/linked/other.img", BackDevice: other.Device, BackInode: other.Inode}
	namesake := loop.Device{Name: "/dev/loop5", BackFile: "/volumes/vol-1/head/data", BackDevice: sameName.Device, BackInode: sameName.Inode}

	root, err := unix.Open(pool, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	got := volumesByPath(root, []loop.Device{volume, deleted, linked, throughDir, namesake})
	if len(got) != 2 || got[0].Name != volume.Name || got[1].Name != deleted.Name {
		t.Errorf("found %v, want only %s and %s, whose file is the pool's", got, volume.Name, deleted.Name)
	}
}
