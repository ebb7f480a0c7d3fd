package btrfs

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A delta sent back to the pool that first sent its base names the base by
// the sender's received UUID, which here is the base's own UUID: the pool
// took that snapshot itself, and nothing in it carries the UUID as a received
// one. btrfs receive finds the parent either way, but before btrfs-progs
// 6.10.1 it looks the source of each clone command up by received UUID only
// (btrfs-progs issue #606, fixed by "receive: cannot find clone source subvol
// when receiving in reverse direction"), and refuses such a stream as soon
// as it clones an extent from its base: "ERROR: clone: did not find source
// subvol". A relocation back, or the first delta back from a fail-over
// clone, is exactly that stream, and Debian 12 ships btrfs-progs 6.2.
//
// So such a receive runs beside an alias: a snapshot of the base, in staging,
// whose received UUID is the base's UUID. btrfs receive finds the alias by
// either lookup, builds the new snapshot from it and clones from it; the
// alias holds what the base holds, and is deleted when the receive ends (or
// by recovery, with the rest of staging, after a crash).

// withBaseAlias runs receive with an alias of base in place when a lookup
// by received UUID cannot find base: a snapshot this pool took. A full
// stream has no base (the zero snapshot), a received base needs no alias.
func (p *Pool) withBaseAlias(ctx context.Context, base snapshot, receive func() error) error {
	if base.uuid == "" || base.receivedUUID != "" {
		return receive()
	}
	stage, err := p.staging()
	if err != nil {
		return err
	}
	alias := filepath.Join(stage, "base")
	err = p.btrfs.snapshot(ctx, p.layout.snapshot(base.volume, base.name), alias, false)
	if err == nil {
		err = setReceivedUUID(alias, base.uuid)
	}
	if err == nil {
		err = receive()
	}
	return withCleanup(err, p.discard(ctx, stage, false))
}

// receivedSubvolArgs is struct btrfs_ioctl_received_subvol_args of
// linux/btrfs.h; receivedSubvolArgsBytes is its size there.
type receivedSubvolArgs struct {
	uuid     [16]byte
	stransid uint64
	rtransid uint64
	stime    ioctlTimespec
	rtime    ioctlTimespec
	flags    uint64
	reserved [16]uint64
}

// The kernel's layout, checked at compile time: the index is out of range
// unless the two sizes are equal.
var _ = [1]struct{}{}[unsafe.Sizeof(receivedSubvolArgs{})-receivedSubvolArgsBytes]

type ioctlTimespec struct {
	sec  uint64
	nsec uint32
	_    uint32
}

const (
	receivedSubvolArgsBytes = 200
	// iocSetReceivedSubvol is BTRFS_IOC_SET_RECEIVED_SUBVOL:
	// _IOWR(BTRFS_IOCTL_MAGIC 0x94, 37, struct btrfs_ioctl_received_subvol_args).
	iocSetReceivedSubvol = 3<<30 | receivedSubvolArgsBytes<<16 | 0x94<<8 | 37
)

// setReceivedUUID records uuid as the received UUID of the writable
// subvolume at path, as btrfs receive does for what it receives.
func setReceivedUUID(path, uuid string) error {
	raw, err := hex.DecodeString(strings.ReplaceAll(uuid, "-", ""))
	if err != nil || len(raw) != 16 {
		return fmt.Errorf("btrfs: %q is not a UUID", uuid)
	}
	var args receivedSubvolArgs
	copy(args.uuid[:], raw)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), iocSetReceivedSubvol, uintptr(unsafe.Pointer(&args))); errno != 0 {
		return &os.PathError{Op: "ioctl BTRFS_IOC_SET_RECEIVED_SUBVOL", Path: path, Err: errno}
	}
	return nil
}
