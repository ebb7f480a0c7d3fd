// Package workload holds the block-level models of the applications baton's DR
// scenarios protect -- WordPress (a database and an uploads volume) and Gitea (a
// repository and a database volume) -- and the checker that proves, from the
// bytes a device holds, what survived a fail-over.
//
// A model writes through storage/backend.Device, so the same code drives the
// simulation's DRBD and ZFS devices and the real bed's loop and DRBD devices. It
// is deterministic: its randomness comes from the *rand.Rand it is built with and
// its time from the time.Time each Step is given; it starts no goroutine and
// imports nothing of the operating system, so it runs inside the simulation.
//
// # Writes, barriers and acknowledgements
//
// Every write is one whole block of BlockSizeBytes whose first bytes are a
// self-describing header: the workload and volume names, the block's own
// address, a per-volume sequence number and a CRC-32C of the whole block. A
// model writes the way its application does -- a transaction's redo-log records
// and then Sync; a file's data blocks, Sync, then the directory block naming
// them, Sync; a push's objects, Sync, then the refs block, Sync -- and a write
// is acknowledged only when a Sync after it returned without error. A write is
// recorded before it is issued, so a write whose WriteAt failed may still be
// found on the device (it is then simply unacknowledged); a step whose write or
// Sync fails stops the model (ErrStopped) until Resume, as a database stops at a
// failed fsync.
//
// # Fault model the checker assumes
//
// A device applies each block write atomically and in the order the model
// issued them: whatever it holds after a crash, a snapshot or a fail-over is the
// state after some prefix of the model's writes. The simulation's devices, a ZFS
// snapshot of a zvol and a DRBD peer of synchronous, one-at-a-time writes
// (protocol C) all keep that promise; a disk with a volatile write cache behind
// buffered I/O does not, and is not what the beds run.
//
// # Verification
//
// Verify reads every block the model's history touched -- O(blocks written),
// never O(volume size) -- and reports per volume (Verdict):
//
//   - crash consistency: the prefix of the history the device holds, or the
//     blocks that no prefix explains (a torn or out-of-order state, a block from
//     no write of this history, a checksum mismatch), each with the volume, the
//     block, what was expected and what was found;
//   - the application's invariant on top: every transaction committed in the
//     prefix is recoverable from the redo log and the data pages; every file the
//     uploads directory names has all its blocks; every ref points at a complete
//     object whose history is complete;
//   - the acknowledged writes after the prefix: lost, with the age of the oldest
//     at the verdict (the loss age). The RPO is measured from the failure, which
//     only the caller knows (VolumeVerdict.RPO: the failure minus the recovery
//     point the device holds). Whether a loss is a violation is the scenario's
//     call (a planned relocate may lose none, an unplanned fail-over loses what
//     it loses);
//   - the bytes written, and (Changes) the bytes changed after a point, to
//     compare with the bytes a fail-back shipped.
//
// Resume continues the model from what a consistent verdict found: the writes
// after the prefix are discarded from the history for good, so a block that
// still holds one of them (the old site's diverged tail) is reported as a write
// this history does not have.
package workload
