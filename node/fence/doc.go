// Package fence stops every write to a block device, however the write
// reaches it: a fenced member of a volume accepts no write at all.
//
// # Two ways in, two stops
//
// A write reaches a block device through its device node (a raw writer: dd,
// a block-mode volume, the pool's own Devices) or as a bio of a file system
// mounted from it. The device's read-only flag (BLKROSET, what `blockdev
// --setro` sets) stops the first kind: the kernel refuses the write with
// EPERM, on descriptors opened before the flag too. It does not stop the
// second: for a bio of a mounted file system the kernel only warns ("Trying
// to write to read-only block-device loopN") and lets it through, so an
// fsync under a mounted ext4 succeeds after `blockdev --setro` (Linux 6.18).
// Fence therefore also shuts down every file system mounted read-write from
// the device (FS_IOC_SHUTDOWN, which ext4 and xfs -- what the CSI driver
// formats -- implement): from then on it fails every write and fsync with
// EIO.
//
// # The shutdown flag
//
// FS_SHUTDOWN_FLAGS_NOLOGFLUSH: the file system stops where it is and writes
// neither its dirty data nor its journal. Nothing it had not yet made
// durable reaches the device after the fence, and nothing is lost that a
// writer was told was durable: an fsync that returned had its journal
// commit on the device already, and the journal replays at the next mount.
// The other flags flush first (DEFAULT freezes and syncs the whole file
// system, LOGFLUSH commits the running transaction): both write to the
// device after the fence, data no fsync acknowledged, and the flush itself
// can wait for I/O that a fenced replica should not start. ext4 still
// checkpoints journal blocks it had committed before the fence into their
// home locations when it is unmounted (the bytes change, what they hold does
// not); xfs writes nothing more.
//
// # Finding the mounts
//
// By the device's number (major:minor) in the mountinfo of the node's mount
// namespace, not by path: kubelet mounts a volume at its staging path and
// binds it into pods, in the node's namespace, which is not the agent's
// container's. The Namespace is a process of that namespace seen through
// /proc (/proc/1 with hostPID), and a mount point is opened through that
// process's root, resolved inside it (openat2 RESOLVE_IN_ROOT), and checked
// to be on the device before it is shut down: a mount stacked over the
// mount point would be another file system. One mount suffices per device:
// every mount of it shares the one file system (superblock).
//
// # Failing closed
//
// The caller (the hub) must never believe a device fenced that is not. A
// file system mounted read-write that has no shutdown (btrfs on this
// kernel, for one) makes Fence fail with ErrNoShutdown, naming the device,
// the type and the mount point. A device claimed by a stacked device that
// is not fenced fails with ErrUnfencedHolder. A device held exclusively
// with no holder in sysfs and no mount of it in the namespace (the agent
// sees another namespace than kubelet's, or a mount raced the read of
// mountinfo) fails with ErrUnseenHolder. A file system mounted read-only
// (its superblock, not only one mount) writes nothing and is left as it is.
// Fence is idempotent: a file system already shut down (shutdown.go: ext4
// says so in its super options on Linux 6.18, xfs refuses to open anything,
// and both refuse an xattr get of the mount's root with EIO) counts as
// stopped.
//
// # Stacked devices
//
// A device claimed by a stacked device -- a zvol as DRBD's backing disk --
// has no mount of its own: the file system is mounted from the device on
// top (/dev/drbdN), and every write reaches the zvol through it, where the
// zvol's flag stops nothing (the kernel only warns). Shutting that file
// system down is the fence of the device on top, set by its owner first:
// the node agent fences the DRBD device before it demotes it, and then the
// zvol. Fence on the claimed device checks that the fence above holds: each
// holder (sysfs holders/) read-only, by BLKROSET or by its driver (DRBD
// marks a Secondary's device so), with no file system mounted read-write
// from it that is not shut down; otherwise it fails with ErrUnfencedHolder,
// naming the holder. It never fences the holder itself: a holder's writes
// (a DRBD Primary's replication, a resync) are the holder's to stop, in the
// order its owner chooses.
//
// # Lifting
//
// Lift clears the flag. A file system the fence shut down stays shut down
// for as long as it is mounted -- the kernel has no way back -- and writes
// again only once it is unmounted and mounted anew (the journal replays
// then). Lift reports such a mount with ErrStillShutDown, every time it is
// called until the mount is gone, rather than letting a promoted member look
// writable while every write through its file system fails. Linux 6.1's
// ext4 (Debian 12's kernel, the vmtest guests') neither shows "shutdown" in
// its super options nor refuses to open its root; what it does refuse is an
// xattr get (EIO), which writes nothing, and the probe of the mount's root
// by one (probe.go) is how Lift sees the shutdown there, and how a zvol's
// fence under a fenced but still mounted DRBD device sees that its holder's
// file system is stopped (ci/vmtest/integration/fence_test.go). The probe
// needs CAP_SYS_ADMIN (the trusted namespace); without it the kernel answers
// for the file system that nothing is there, Lift passes over a shut-down
// ext4 on 6.1, and the zvol's fence fails closed (ErrUnfencedHolder) until
// the unmount.
package fence
