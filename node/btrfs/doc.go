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
//     fsync. The fence is the block device's read-only flag (BLKROSET),
//     which the kernel checks on every write, so it holds for descriptors
//     opened before it; volume.json keeps it across attachments and restarts.
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
