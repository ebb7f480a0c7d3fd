// Package agent is the node agent's logic: it converges one storage node on
// the NodeSpec its site's control plane computes, ships the streams the spec
// asks for, takes in the streams other sites send, and reports what the node
// holds. It drives the node only through storage/backend's interfaces, so the
// same code runs on ZFS and DRBD, on btrfs, and inside the simulation.
//
// Adoption is the default, not a mode: a dataset or DRBD metadata that exists
// is used as it is, never re-created; a dataset this node held before and no
// longer finds is an error to report, never a reason to provision an empty one.
package agent
