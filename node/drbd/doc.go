// Package drbd is backend.Replicator on DRBD: drbdadm for what reads the
// resource file (up, dump-md, create-md, dump), drbdsetup for what acts on
// the running resource (primary, secondary, new-current-uuid, down, show,
// status), all through an exec.Cmder.
//
// It drives DRBD 8.4 (the kernel's own module in Debian's kernels, with
// drbd-utils 9 handing off to drbdsetup-84); Version keeps the places where
// DRBD 9 differs apart: the resource file, the `show` layout, and status
// naming connections by peer rather than "peer".
//
// Each resource has a file of its own, outside /etc/drbd.d, that drbdadm
// reads with -c: drbdadm refuses every file drbd.conf includes once two of
// them reuse a minor or a port. The file is the configuration replicatortest
// assumes: protocol C, `fencing resource-only` without a fence-peer handler,
// after-sb policies `disconnect`, internal metadata at the end of the node's
// zvol. It is written only for a resource that is not up; a running resource
// is never adjusted, and Up with another configuration is refused.
//
// Refusals carry the tools' words in a *backend.ToolError; the kinds come
// from DRBD's own numbers ("State change failed: (-2)", "Failure: (102)").
// Status maps DRBD's Unknown peer role and DUnknown peer disk the way
// backend.PeerStatus asks: a peer that is not Connected is Secondary and
// Outdated.
package drbd
