//go:build !baton_bugs

package csi

import "github.com/baton-dr/baton/storage/chain"

// The choices the resolution rules make for the replication RPCs and for
// NodeStage, each in one function. A build with the baton_bugs tag -- the
// beds' proof that their scenarios catch a broken rule -- puts the seeds'
// bugs beside them (bugs_on.go, internal/bugs); this build carries none.

// demoteTarget is the member Demote and Disable act on: the chain's last
// local member (rule 1; with no cluster marked local, the chain's end).
func demoteTarget(r chain.Resolution, local []chain.ClusterID) (chain.Member, error) {
	return r.LastLocal(local)
}

// goneIsDone says whether a 404 of member is a Demote or Disable done: it
// is when the chain records the member -- reaped, or its record gone
// (rule 2).
func goneIsDone(r chain.Resolution, member chain.Ref) bool { return r.Contains(member) }

// resyncTarget is the member Resync and the status read address: the
// chain's end, the member holding the data (rule 4).
func resyncTarget(r chain.Resolution, _ []chain.ClusterID) chain.Member { return r.End() }

// promoteTarget is the member Promote fails over from: the chain's end
// (rule 3).
func promoteTarget(r chain.Resolution, _ []chain.ClusterID) chain.Member { return r.End() }

// askedFilesystem is the filesystem NodeStage is asked for: as the volume
// capability names it, empty expressing no opinion (rule 7).
func askedFilesystem(asked string) string { return asked }
