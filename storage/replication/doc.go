// Package replication is one pairing's life: a source member on one site ships
// snapshots to a target cluster on the other.
//
// A Pairing is a pure state machine in etcd/raft's shape. Time and completions
// come in (Tick, Taken, Shipped, Failed); what the pairing wants done next comes
// out (Want: take a snapshot, ship one, prune some). The site's control plane
// persists the Pairing, turns its wants into node work, and feeds the results
// back. Every input is safe to repeat or to arrive late: a completion that does
// not match what is in flight is ignored, so retries, duplicates and reordering
// never move the state backwards.
//
// Snapshots are named by a per-pairing sequence ("baton-000042"), so a retried
// order finds the snapshot it already took instead of taking another. Retention
// keeps the newest Retention snapshots and always the base of the next delta:
// the newest snapshot the target is known to hold.
package replication
