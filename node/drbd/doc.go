// Package drbd is backend.Replicator on DRBD: drbdadm for what reads the
// resource file (up, dump-md, create-md, dump), drbdsetup for what acts on
// the running resource (primary, secondary, new-current-uuid, down, show,
// status on 8.4, events2 on 9), all through an exec.Cmder.
//
// It drives DRBD 8.4 (the kernel's own module in Debian's kernels, with
// drbd-utils 9 handing off to drbdsetup-84) and DRBD 9, whichever module
// /proc/drbd reports. Version keeps the places where DRBD 9 differs apart:
// the resource file (node-ids from the core's allocation, a connection-mesh,
// fencing as a net option, auto-promote off), the `show` layout (the
// node's address in each connection's path, the kernel knowing node-ids and
// peer names), status read from `drbdsetup events2 --now --statistics`, and
// primary/secondary naming the resource instead of the minor.
//
// The DRBD 9 path has not run against a DRBD 9 module: none is loaded where
// baton is built and tested, and the vmtest guests run Debian's kernel, which
// ships 8.4. Its parsers are tested on samples in the formats of drbd-utils 9
// and the projects that read them (testdata names each source), its
// resource file is read by drbdadm 9.22 itself (testdata/dump9), and its
// commands are tested against a test double of the tools; what a real module
// prints and refuses is still to be captured, as 8.4's was in the guests.
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
//
// Nodes that share a kernel (kind's containers) keep their resources and
// minors apart with Options.SharedKernel: the kernel's resource is
// `<resource>-<suffix>` and its minor shifted by an offset, and every answer
// is in the core's name and minor again (sharedkernel.go says why the peers
// need not agree).
package drbd
