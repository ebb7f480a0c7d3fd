package infra

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/loop"
)

// How teardown tells a pool's volumes from every other loop device, and
// why it is sound (issue 16: a crashed bed's pools, alive in the kernel
// with no mount anywhere, whose image btrfs would no longer mount fresh).
//
// What the kernel exposes, on 6.x:
//   - A loop device answers LOOP_GET_STATUS64 with the (device, inode) of
//     its backing file as getattr gives them now; for a file in btrfs the
//     device is its subvolume's anonymous device number (major 0), which
//     sysfs and mountinfo show nowhere -- nothing outside the file system
//     says which btrfs an anonymous number belongs to.
//   - /sys/fs/btrfs/<fsid>/devices/ names the block devices each live
//     btrfs (every one the kernel holds open, mounted or not) has open. The
//     directory lives exactly as long as the file system's fs_info.
//   - A file open in a btrfs -- a loop device's backing file -- pins its
//     mount and so its superblock: a btrfs any loop device is backed by is
//     live, and so listed there with its devices.
//
// So a bed pool that no live btrfs holds has no volumes over it: it is
// never mounted to look (its image may be a crashed bed's, which a fresh
// mount reads as garbage: "can't read superblock"). A pool a live btrfs
// holds is mounted read-only by that very device, which makes the kernel
// hand back the live superblock (btrfs finds the file system by the
// device's dev_t before it reads anything but the device's superblock)
// rather than open a second instance; subvolid=5 keeps the mount from
// searching the root tree for the default subvolume, and each volume is
// then looked up along the path sysfs shows for its loop device, whose
// dentries the loop's open file keeps in memory -- no metadata read from
// an image another writer may have overwritten. A loop device is a
// pool's volume only when the file found there has its (device, inode):
// the anonymous number is unique while the subvolume lives, which the
// loop's open file guarantees, so the match is the file itself, not a
// name. A mount that was not the live instance (its numbers differ) or a
// path that leads elsewhere matches nothing; no match is ever made by
// path alone.

// liveBtrfsHolding names the live btrfs file system (its sysfs fsid)
// holding the block device rdev open, or "" if none does.
func liveBtrfsHolding(rdev uint64) (string, error) {
	want := fmt.Sprintf("%d:%d", unix.Major(rdev), unix.Minor(rdev))
	devs, err := filepath.Glob("/sys/fs/btrfs/*/devices/*/dev")
	if err != nil {
		return "", err
	}
	for _, f := range devs {
		got, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue // closed between the glob and the read
		}
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(string(got)) == want {
			return filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(f)))), nil
		}
	}
	return "", nil
}

// maxHintDepth bounds the path suffixes tried for one loop device.
const maxHintDepth = 64

// volumesByPath finds, in the pool mounted at root, the loop devices whose
// backing file is there: for each device, every suffix of the path sysfs
// shows for it ("/volumes/v/head/data" for a dead namespace's mount, the
// whole path in the namespace that still has it) is opened beneath root,
// no symlink followed and no mount crossed, and the device is the pool's
// when what opened has the device's (device, inode).
func volumesByPath(root int, all []loop.Device) []loop.Device {
	var found []loop.Device
	for _, d := range all {
		if backedBeneath(root, d) {
			found = append(found, d)
		}
	}
	return found
}

// backedBeneath tells whether the file backing d is found beneath root
// along some suffix of d's backing path.
func backedBeneath(root int, d loop.Device) bool {
	path := strings.TrimSuffix(d.BackFile, " (deleted)")
	for depth := 0; depth < maxHintDepth && path != "" && path != "/"; depth++ {
		if id, ok := fileBeneath(root, path); ok && d.BackedBy(id) {
			return true
		}
		_, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		if !ok {
			break
		}
		path = "/" + rest
	}
	return false
}

// fileBeneath identifies the regular file at path beneath root, reached
// following no symlink and crossing no mount: a link in the pool to a
// file elsewhere must never lend that file's identity to the pool.
func fileBeneath(root int, path string) (loop.FileID, bool) {
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_XDEV | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(root, strings.TrimPrefix(path, "/"), &how)
	if err != nil {
		return loop.FileID{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return loop.FileID{}, false
	}
	return loop.FileID{Device: st.Dev, Inode: st.Ino}, true
}
