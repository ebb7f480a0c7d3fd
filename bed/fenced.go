package bed

import "github.com/baton-dr/baton/storage/chain"

// InvariantFencedPrimary: the DR machinery fenced a member a running
// application writes (bed/sim holds the same rule on its pools).
const InvariantFencedPrimary = "application: its primary is fenced"

// FencedPrimary holds, over what the sites record of one chain, the rule
// that nothing in the DR machinery fences the primary: while an application
// runs on cluster, the chain's last member there -- the newest generation
// on it, the member the CSI node attached -- is Active. It returns that
// member and true when the rule is broken; a chain with no member on
// cluster breaks nothing.
//
// It is the check a bed needs where the fence does not stop the
// application's writes: a loop device's read-only flag, which the kernel
// checks on writes to the device node but not on the file system mounted
// on it, or a DRBD replica that leaves a refusing disk behind.
func FencedPrimary(records []chain.Member, cluster chain.ClusterID) (chain.Member, bool) {
	var last chain.Member
	found := false
	for _, m := range records {
		if m.Ref.Cluster == cluster && (!found || m.Generation > last.Generation) {
			last, found = m, true
		}
	}
	return last, found && last.State != chain.Active
}
