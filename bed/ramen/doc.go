// Package ramen drives csi-addons replication the way Ramen and the csi-addons
// VolumeReplication controller do, so that every bed exercises the driver with
// the calls, the order and the retries it meets in production
// (REFERENCE.md, "The order Ramen and the csi-addons controller call the
// driver"):
//
//   - a VolumeReplication that wants Primary and is not: Enable, then Promote
//     without force; on FailedPrecondition, Promote with force;
//     then GetVolumeReplicationInfo every half scheduling interval;
//   - one that wants Secondary: Demote once (status Secondary, degraded), then
//     Demote and Resync(force=autoResync) every 30 s until Resync says ready;
//   - a deleted one: Disable, NotFound tolerated.
//
// A VR is a pure reconcile step over a Client; the bed decides when it runs
// (simulated events, or a real ticker) and whether the hub can reach its site
// to change what it wants.
package ramen
