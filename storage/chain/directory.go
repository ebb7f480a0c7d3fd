package chain

import "errors"

// ErrUnreachable reports that a cluster could not be asked. It is not
// NotFound: an unreachable cluster may record members that matter.
var ErrUnreachable = errors.New("cluster unreachable")

// Directory answers what each cluster records of a chain. Production asks each
// cluster's storage API; the simulation and the tests keep records in memory.
type Directory interface {
	// Members returns the members of root's chain that cluster records of its
	// own, in any order; none when it records none. ErrUnreachable (wrapped)
	// when the cluster cannot be asked.
	Members(cluster ClusterID, root Ref) ([]Member, error)
}
