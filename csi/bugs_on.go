//go:build baton_bugs

package csi

import "github.com/baton-dr/baton/storage/chain"

// demoteTarget re-introduces the first seed's bug for the tests that must
// catch it: Demote and Disable act on the chain's end instead of its last
// local member, so the recovered old site fences the live primary on the
// other site. Never built into a binary (go build without -tags baton_bugs).
func demoteTarget(r chain.Resolution, _ []chain.ClusterID) (chain.Member, error) {
	return r.End(), nil
}
