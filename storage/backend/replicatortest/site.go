// Package replicatortest is the conformance suite of backend.Replicator: the
// simulated DRBD and the real one (drbdadm/drbdsetup on DRBD 8.4 and 9) must
// both pass it, so that what the storage core learns against the simulation
// holds on a machine.
//
// The suite speaks only through backend.Replicator and a Site. It assumes the
// resource configuration baton writes: protocol C, no allow-two-primaries,
// `fencing resource-only` without a fence-peer handler, after-sb policies
// `disconnect`, quorum off (quorum is covered by the simulation's own tests),
// and internal metadata.
package replicatortest

import (
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// Site is one site's storage nodes under test. The real implementation drives
// qemu guests and polls; the simulation runs its event queue.
type Site interface {
	// Nodes names the site's nodes, at least as many as the suite asked for.
	Nodes() []string
	// Replicator is the DRBD of one node.
	Replicator(node string) backend.Replicator
	// CreateVolume creates a zero-filled backing volume on a node.
	CreateVolume(node, volume string, sizeBytes uint64) error
	// Address is the host:port a node listens on for a resource's port.
	Address(node string, port uint16) string
	// Partition cuts the network between two nodes, both ways; Heal mends it.
	Partition(a, b string)
	Heal(a, b string)
	// Await lets time pass until cond holds and reports whether it did before
	// the site's bound (a simulated or a real timeout) ran out. cond only reads.
	Await(cond func() bool) bool
	// Pass lets d of the site's time pass.
	Pass(d time.Duration)
}
