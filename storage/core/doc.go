// Package core is the storage control plane of one site: its volumes and their
// places in replication chains, the replicas it keeps of the other site's
// members, the pairings that ship snapshots, and what each storage node must do.
//
// The site operator serves it through the storage API, backed by CRDs; the
// simulation runs the same code over an in-memory store. Everything here is
// level-triggered: API operations record intent; Spec tells a node agent what
// its node should hold; Report feeds back what the node did; Tick moves time-
// driven work (snapshots due, successors to announce, members to reap). No call
// waits for a node.
//
// The package has etcd/raft's shape (decide.go, effects.go): an operation
// (Decisions) reads the store and returns its Effects -- the records to
// write, the requests to send to peer sites, or a question it must have
// answered first -- and calls no peer. Its shell (storageapi.Local in the
// operator and the simulation) writes the records under the locks of the
// operation's chain, asks and sends with no lock held, and feeds the peers'
// answers back as decisions of their own. A multi-record change is ordered
// and keyed so that a write that failed half-way is completed by the next
// attempt, never repeated. Site's methods of the operations' names are a
// synchronous shell for tests; the operator and the simulation make every
// operation through storageapi.Local.
//
// The chain rules live in storage/chain, one pairing's cycle in
// storage/replication, placement and DRBD allocation in storage/placement. This
// package decides what a fail-over, a demotion, a resync and a reaping mean:
//
//   - Failover clones the newest snapshot received from the source into a new
//     member one generation on, which becomes the chain's end. Without force it
//     first asks the source's site and refuses while the source is a live
//     primary or its final sync has not arrived (Ramen then retries with force).
//   - A member fenced by Demote takes a final snapshot and ships it, so a planned
//     relocation loses no acknowledged write.
//   - A member that learns of its successor is fenced, keeps its diverged tail as
//     a named snapshot, and never ships again: the tail is preserved, never
//     shipped into the chain.
//   - Resync re-aims the end's pairing at the recovered site from the newest
//     snapshot both hold, so only the delta ships.
//   - A demoted member whose successor's stream has arrived here is reaped: its
//     writable device goes, its record and snapshots stay as a tombstone.
package core
