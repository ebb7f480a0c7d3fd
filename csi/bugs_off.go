//go:build !baton_bugs

package csi

import "github.com/baton-dr/baton/storage/chain"

// demoteTarget is the member Demote and Disable act on: the chain's last
// local member (rule 1; with no cluster marked local, the chain's end). A
// build with the baton_bugs tag -- the tests that prove the scenarios catch
// a broken rule -- puts the first seed's bug here instead (bugs_on.go).
func demoteTarget(r chain.Resolution, local []chain.ClusterID) (chain.Member, error) {
	return r.LastLocal(local)
}
