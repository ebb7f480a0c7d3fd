// Package zfs is backend.Pool on OpenZFS zvols: every method runs the zfs
// command through an exec.Cmder and parses its -H -p output (tab-separated,
// exact numbers), so the same code drives a node, a qemu guest or a test
// double.
//
// A Pool owns the volumes directly under one dataset (the pool's root, or a
// dataset in it). It adopts what it finds and never re-creates: CreateFilePool
// makes a pool on a sparse file only when none by that name exists or can be
// imported from the file.
//
// Refusals carry zfs's own words in a *backend.ToolError; their kinds come from
// one table (refusals.go) of the messages libzfs prints, the same texts the
// simulation (sim/zfs) uses. A few refusals are baton's, not zfs's: zfs would
// shrink a volume, and would take a volume name with a '/' as a nested
// dataset; the Pool refuses both before zfs runs.
//
// Provisioning: a thin volume is `zfs create -s -V`; a thick one is a plain
// `zfs create -V`, which reserves the volume's size plus its metadata as
// refreservation. Growing a thick volume grows the reservation (libzfs does
// so when the refreservation still matches the old size). VolumeInfo reports
// Thick when a volume has a refreservation.
//
// Streams: Send runs `zfs send -n -P` first, so that zfs's refusal (a missing
// or later base) comes back from Send itself, then streams `zfs send [-i
// base]`; a clone is sent from its origin with `-i pool/origin@snap`. Receive
// is `zfs receive -u`, never -F: a target written since its last snapshot is
// refused, never rolled back.
package zfs
