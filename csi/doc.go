// Package csi is baton's CSI driver: the CSI Identity, Controller and Node
// services, and the csi-addons Identity and Replication services.
//
// Every service is a plain struct with its dependencies injected, so that the
// simulation calls its methods directly, without gRPC: a Clusters source turns
// a request's secrets into the storage API of each cluster (through a Dialer:
// production dials storageapi.Client, the simulation its own Cluster), the node
// service takes a Devices and a Mounter (production: the DRBD device and real
// blkid, mkfs, mount; the tests and the simulation: doubles). Server serves
// them all on unix sockets.
//
// A volume handle is the root of the volume's replication chain, kept for ever.
// Every RPC resolves it with chain.Resolve and acts on the member the chain
// rules choose (ARCHITECTURE §3):
//   - Demote and Disable act on the chain's last local member (rule 1); a 404
//     for a member the chain records is success, a 404 for a handle without
//     any record stays NotFound (rule 2).
//   - Promote addresses the chain's end: the local cluster fails it over
//     (rule 3). Resync and GetVolumeReplicationInfo address the end, with the
//     local cluster as the fail-back source (rule 4).
//   - NodeStageVolume attaches the chain's end when it is local and Active,
//     also while every other site is unreachable (rule 6), and mounts what the
//     device carries when the volume names no filesystem (rule 7).
//
// Expected outcomes map to gRPC codes in one table (codes.go); every RPC is
// idempotent and takes a per-volume lock, answering Aborted while another
// operation on the volume runs.
package csi
