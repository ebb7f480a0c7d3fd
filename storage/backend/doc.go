// Package backend defines the interfaces through which the storage core and the
// node agent reach a node's storage: Pool (ZFS zvols, btrfs subvolumes, or the
// simulation's copy-on-write disks), Replicator (DRBD inside a site), and Clock.
//
// Every implementation passes the same conformance suites (pooltest,
// replicatortest): the simulation is only worth what its faithfulness to the
// real tools is worth, so a behaviour the suites do not pin down is a behaviour
// the simulation may get wrong.
//
// Errors are sentinels wrapped in a *ToolError that carries the real tool's own
// words, so that a refusal reads the same on the simulation and on a machine.
package backend
