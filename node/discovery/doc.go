// Package discovery finds what a node could give a storage pool -- its blank
// whole disks, and the loop file a loop-backed pool already lives in -- and
// hands it to the site operator's discovery runs (OperatorOps).
//
// # How it reaches the operator
//
// Through a file: a JSON list of nodes, each {"name", "address", "devices":
// [{"path", "type", "sizeBytes", "model"}]}, exactly what the operator's
// --discovery-file reads (controllers/site.ParseCandidates). Each node agent
// puts its own entry into the list at start (Publish), under an exclusive
// lock, replacing its previous entry and keeping the other nodes'. The beds
// share one directory between the node agents and the operator; a cluster
// without such a directory runs the operator with the list it builds itself.
// A StorageNode status field would spare the shared file but needs the node
// agent to hold Kubernetes credentials, which it has no other use for.
//
// # What is a candidate
//
// A whole disk (lsblk's type "disk") that is writable, not removable, not
// empty, has no partitions or holders, is not mounted, and carries no
// signature -- neither in lsblk's view nor when blkid probes the device
// itself. The node's own devices are never candidates: zvols (zd*), DRBD
// devices, zram, ram disks and network block devices are left out by name,
// loop devices by type. A loop file is reported as it is (type LoopFile,
// its size); the operator proposes new loop files itself.
package discovery
