// Package chain is the replication chain of a volume and the rules that resolve a
// volume handle to the member an operation must act on.
//
// A PersistentVolume keeps the handle it was created with for ever. Every
// fail-over or relocation appends a member on the other site: root → clone →
// clone …, never compacted. Each member is recorded by its own cluster; a
// cluster may be unreachable, and a cut-off member may not know of its
// successor. Resolution therefore gathers what every reachable cluster records,
// links members both ways (a member's own successor field, and a later member's
// predecessor field), and walks from the root with a visited-set guard and a
// hard bound far above any real chain.
//
// The rules (ARCHITECTURE §3), each of them a bug a team shipped once:
//  1. Demote and Disable act on the chain's last local member.
//  2. A 404 for a member the chain records is success for Demote and Disable;
//     a 404 for a handle with no relationship stays NotFound.
//  3. Promote addresses the chain's end, the member holding the data.
//  4. Resync and status address the chain's end.
//  5. Walks are bounded by a cycle guard and a hard bound of MaxHops.
//  6. Resolution from the site that holds the end succeeds while every other
//     site is unreachable.
package chain
