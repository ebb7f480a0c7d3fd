// Package placement decides where a volume's replicas live inside one site,
// which DRBD node-id, port and minor each resource gets, and what adopting
// existing storage may and may not do. It is pure decision logic: the site
// operator and the node agent call it, persist what it returns and perform the
// effects; nothing here performs I/O or keeps time.
//
// Three parts, each a lesson of a control-plane migration (LINSTOR to
// Blockstor) in which volumes that held data were re-provisioned with fresh
// ports, minors and node-ids, thick pools reserved sparse volumes and filled up,
// replica top-ups surprised operators, and live ports had to be read from the
// kernel:
//
//   - Place chooses placeCount distinct nodes for a volume. Existing replicas are
//     kept and never moved. Additions are planned only when the caller asks for
//     them (Request.AddReplicas) and never while the volume is being adopted
//     (Request.Adopting): a reconcile loop that tops up every under-replicated
//     volume as soon as it starts is exactly what surprised operators during the
//     migration. Without AddReplicas, Place only reports under-replication.
//
//   - Allocator hands out DRBD values by Blockstor's rules: node-id is the lowest
//     free 0..15 among one resource's replicas; port and minor are one value per
//     resource, shared by all its nodes, the lowest free cluster-wide inside the
//     intersection of the hosting nodes' ranges. None ever changes once set:
//     allocating an existing resource returns its values, and adding a replica
//     reuses them or refuses. The one exception is Adopt, which records what the
//     kernel runs, because the kernel's value is the one that was set.
//
//   - Decide turns what the node agents probed (DRBD metadata, filesystems, live
//     kernel configuration, pool provisioning) into adoption decisions, each with
//     its reason, and refuses (ErrWouldReprovision, ErrDataNotFound) rather than
//     ever starting a volume that holds data afresh.
//
// The allocator's invariants (ports and minors unique per node, node-ids unique
// per resource, values inside their nodes' ranges, nothing moved once set) are
// checked from the records whenever NewAllocator reads them back, and after
// every step in builds with the invariants tag (go test -tags invariants).
package placement
