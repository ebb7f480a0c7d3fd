// Package zfs simulates one node's ZFS pool of zvols behind backend.Pool.
//
// The simulation is worth what its faithfulness is worth: it refuses what real
// `zfs` refuses (OpenZFS 2.1 semantics, read from libzfs and the DMU), in zfs's
// own words, wrapped by backend.Refusal so that errors.Is matches the kind.
// Where zfs prints a message over several lines, the simulation keeps the
// first sentence, joining a sentence zfs breaks across lines with a space.
//
// # Blocks and copy-on-write
//
// A volume is a tree of block pointers, like the indirect blocks of a ZFS
// object: nine levels of 64 slots address 2^54 blocks, and a leaf slot points at
// an immutable block of volblocksize bytes. Unwritten blocks are nil and read
// as zeros, so memory grows with the blocks written, never with the volume's
// size. Nodes and blocks carry reference counts: a snapshot or a clone shares
// the volume's root by taking a reference, and a later write copies only the
// path from the root to the leaf it changes (path copying, as btrfs's
// refcounted trees do). A persistent tree was chosen over a chain of deltas
// because reads stay at nine hops however many snapshots exist, clones need no
// special case, and the difference between two related trees is found by
// skipping every subtree the two share by pointer: an incremental send walks
// only the changed paths, as ZFS skips block pointers born before the base.
//
// # Space
//
// The pool's allocation is the bytes of every distinct block (a block shared
// by a volume, its snapshots and its clones counts once), plus, per volume, the
// unsynced writes that will need new blocks, plus what a thick volume's
// refreservation still holds back: max(0, reservation - bytes unique to the
// volume). That is ZFS's usedbyrefreservation, so a snapshot of a thick volume
// needs free space for min(unique, reservation), as dsl_dataset_snapshot_
// reserve_space demands. The simulation keeps no metadata or slop space: the
// capacity is what blocks and reservations may use. Every operation that would
// raise the allocation past the capacity is refused whole with ErrPoolFull
// ("out of space"); operations that lower it always succeed, even on a pool
// shrunk below its allocation with SetSizeBytes. Clones and received volumes are
// thin, as `zfs clone` and `zfs recv` create them without a refreservation.
//
// # Durability and the fault model
//
// Device writes land in the volume's volatile cache, the page cache above the
// zvol, and take their space when they are accepted (ZFS reserves dirty space
// at write time). Sync, and the last Close of a volume (the kernel's
// sync_blockdev on last close), move them into the block tree; only then do
// they count as modifications of the volume, appear in snapshots (Snapshot
// takes the synced content) and survive Crash. Crash models a node crash:
// every unsynced write is lost, every open Device becomes unusable, and the
// synced state stays exactly as it was. Rollback discards unsynced writes
// with the rest of what the volume gained; Receive leaves them in the cache,
// where a later Sync writes them on top (and the volume counts as modified).
//
// Faults are injected per operation kind (Op): FailNext queues an error for the
// next call of one kind, SetFaults installs a function consulted on every call.
// An injected fault is returned before the operation changes anything.
// SetSizeBytes shrinks or grows the pool to simulate a full disk.
//
// # Streams
//
// Send returns a *Stream: a real byte encoding (magic, version, flags, block
// size, volume size, base GUID, snapshot GUID and name, block count, then one
// record per block and a CRC-64 trailer) that any io.Reader can carry, with a
// fast path: Receive of an unread *Stream skips the encoding. Receive is all or
// nothing: a stream is read and checked whole before anything changes.
//
// Everything is deterministic: snapshot GUIDs come from Options.Seed (or
// Options.GUIDs), listings are sorted, and no map order reaches an output.
package zfs
