//go:build baton_bugs

package csi

import (
	"github.com/baton-dr/baton/internal/bugs"
	"github.com/baton-dr/baton/storage/chain"
)

// The seeds' bugs in the driver, each beside the choice it breaks
// (bugs_off.go), switched on by name (internal/bugs). Never built into a
// binary without -tags baton_bugs.

// demoteTarget with demote-end acts on the chain's end: after an unplanned
// fail-over A->B, the recovered site A's demote fences the live clone on B.
func demoteTarget(r chain.Resolution, local []chain.ClusterID) (chain.Member, error) {
	if bugs.On(bugs.DemoteEnd) {
		return r.End(), nil
	}
	return r.LastLocal(local)
}

// goneIsDone with reaped-notfound takes no 404 for done: a demote or
// disable of a reaped member answers NotFound.
func goneIsDone(r chain.Resolution, member chain.Ref) bool {
	return !bugs.On(bugs.ReapedNotFound) && r.Contains(member)
}

// resyncTarget with resync-local addresses the chain's last local member --
// the demoted or reaped old primary -- instead of the end.
func resyncTarget(r chain.Resolution, local []chain.ClusterID) chain.Member {
	if bugs.On(bugs.ResyncLocal) {
		if m, err := r.LastLocal(local); err == nil {
			return m
		}
	}
	return r.End()
}

// promoteTarget with promote-local addresses the chain's last local member
// -- the volume being replaced -- instead of the end.
func promoteTarget(r chain.Resolution, local []chain.ClusterID) chain.Member {
	if bugs.On(bugs.PromoteLocal) {
		if m, err := r.LastLocal(local); err == nil {
			return m
		}
	}
	return r.End()
}

// askedFilesystem with fstype-ext4 turns an empty fsType into ext4 before
// the device is looked at.
func askedFilesystem(asked string) string {
	if asked == "" && bugs.On(bugs.FsTypeExt4) {
		return DefaultFsType
	}
	return asked
}
