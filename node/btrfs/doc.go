// Package btrfs is backend.Pool over btrfs, for nodes without the ZFS
// module: a btrfs filesystem on a loop device over a sparse file, a volume a
// file in its own subvolume exposed as a loop device, snapshots read-only
// subvolume snapshots, and streams `btrfs send` and `btrfs receive`.
//
// # Layout
//
// layout.go draws the tree. A volume is a plain directory holding its
// writable head subvolume (with the file "data", the volume's bytes), its
// read-only snapshot subvolumes and volume.json (provisioning, the origin of
// a clone, the read-only fence). Every change to the tree is made so that a
// crash leaves a state New can finish or undo (recover.go): volumes are built
// and torn down in .staging and appear or vanish by one rename; a head is
// replaced by making the new one beside it and swapping the two by renames.
//
// # How the contract maps onto btrfs
//
//   - Thin volumes are sparse files; thick ones are preallocated with
//     fallocate, which holds the space until the first snapshot shares the
//     extents (btrfs has no refreservation: a write into a shared extent
//     takes new space).
//   - Device is a buffered descriptor of the volume's loop device, attached
//     at the volume's first Open and detached at its last Close; Sync is
//     fsync. The fence (package fence) is the loop device's read-only flag
//     (BLKROSET), which stops every write through the device node,
//     descriptors opened before it too (EPERM, ErrRefused), and a shutdown
//     (FS_IOC_SHUTDOWN, NOLOGFLUSH) of the ext4 or xfs mounted from the
//     device, found by its device number in the node's mountinfo (/proc/1,
//     the agent runs with hostPID): the flag alone lets a mounted file
//     system's bios through. From the fence on, every write and fsync
//     through that file system fails with EIO, and nothing more reaches
//     the head file. volume.json keeps the fence across attachments and
//     restarts, and is written first: a fence that fails is tried again by
//     the agent's next pass.
//   - A fence fails closed, and the volume stays recorded read-only: a file
//     system without a shutdown mounted read-write from the device (btrfs,
//     on Linux 6.18) is fence.ErrNoShutdown naming the device, its type and
//     mount point; a device held exclusively with no mount of it in the
//     node's namespace (the agent without hostPID) is fence.ErrUnseenHolder.
//     A file system mounted read-only is left as it is: it writes nothing,
//     and the read-only device refuses to remount it read-write.
//   - Lifting the fence clears the flag. A file system the fence shut down
//     stays shut down while it is mounted -- the kernel has no way back --
//     so SetReadOnly(false) lifts the fence and returns
//     fence.ErrStillShutDown naming the mount, on every call until it is
//     unmounted: the agent reports "failed to lift the fence" rather than a
//     promoted member that looks writable and fails every write. Once
//     unmounted and mounted again (kubelet restaging the volume) the journal
//     replays and the file system holds every write acknowledged before the
//     fence. On unmount, a shut-down ext4 still writes the journal blocks it
//     had committed before the fence to their home locations (the same
//     data, other bytes of the head file); xfs writes nothing.
//   - Snapshot flushes the loop device and takes a read-only snapshot of the
//     head. Clone is a writable snapshot of a snapshot; btrfs ties no clone
//     to its origin, so volume.json records the origin and the pool refuses
//     to destroy an origin while a clone lives (ErrBusy). Rollback replaces
//     the head with a writable snapshot of the latest snapshot.
//   - A snapshot's GUID is its received UUID when it was received, else its
//     UUID: the identity `btrfs send` writes into a stream and `btrfs
//     receive` looks a stream's base up by, so a GUID names the same bytes
//     on every pool. CreateTxg is the transaction that created the snapshot.
//   - Send is `btrfs send [-p base]` behind an envelope that says whether the
//     base belongs to the volume or to its origin (stream.go). Receive checks
//     the stream's first command against the pool before btrfs reads it, so
//     refusals come first and whole, then receives into staging (a new
//     volume) or among the volume's snapshots (a delta) and replaces the
//     head. A replica is diverged when its head's generation moved past its
//     latest snapshot's (snapshot.go, modifiedSince).
//   - UsedBytes are exclusive extent bytes (btrfs filesystem du); Usage is
//     the image's size and statfs's free space (btrfs filesystem usage).
//
// # Errors
//
// Refusals are *backend.ToolError. The tools' messages become kinds in one
// table of the exact lines observed on this machine (refusals.go), and the
// kernel's errors through a table of system call and errno; what no tool
// checks (a shrink, a diverged replica, a clone's dependency) the pool
// refuses itself, with Tool "baton-btrfs".
//
// # Limits
//
// One mutex serialises the pool's operations, a Receive included for as
// long as its stream flows. A volume that is open cannot be rolled back,
// received into or destroyed (ErrBusy): its loop device would show a file
// the pool replaced. Streams are trusted as far as btrfs receive trusts
// them: the node agent takes them from its peers only.
package btrfs
