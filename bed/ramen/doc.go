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
// A VR is a pure reconcile step over a Client. A Driver is Ramen's hub over
// a bed's applications: what it wishes of each site (Protect, Relocate,
// Failover), delivered in rounds to the sites it reaches, and the tail an
// unplanned fail-over leaves writing on a site it cannot reach. The bed
// supplies its time (simulated events, or a real loop), whether the hub
// reaches a site, and how a round's VRs call their site's driver.
package ramen
