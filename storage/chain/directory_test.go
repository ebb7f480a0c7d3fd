package chain_test

import (
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
)

// directory is an in-memory chain.Directory for tests: records per cluster and a
// set of clusters that do not answer.
type directory struct {
	records     map[chain.ClusterID][]chain.Member
	unreachable map[chain.ClusterID]bool
	asked       int
}

func newDirectory(members ...chain.Member) *directory {
	d := &directory{records: map[chain.ClusterID][]chain.Member{}, unreachable: map[chain.ClusterID]bool{}}
	for _, m := range members {
		d.records[m.Ref.Cluster] = append(d.records[m.Ref.Cluster], m)
	}
	return d
}

func (d *directory) Members(cluster chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	d.asked++
	if d.unreachable[cluster] {
		return nil, fmt.Errorf("dial %s: %w", cluster, chain.ErrUnreachable)
	}
	var out []chain.Member
	for _, m := range d.records[cluster] {
		if m.Root == root {
			out = append(out, m)
		}
	}
	return out, nil
}

func (d *directory) cut(clusters ...chain.ClusterID) *directory {
	for _, c := range clusters {
		d.unreachable[c] = true
	}
	return d
}

// Two sites' cluster UUIDs and a volume UUID generator.
const (
	siteA chain.ClusterID = "aaaaaaaa-0000-4000-8000-000000000001"
	siteB chain.ClusterID = "bbbbbbbb-0000-4000-8000-000000000002"
)

var both = []chain.ClusterID{siteA, siteB}

func volume(i int) chain.VolumeID {
	return chain.VolumeID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))
}

// moves builds the chain of a volume created on site A and moved n times,
// alternating sites: v1 on A (root), v2 on B, v3 on A, … Every member knows its
// successor; all but the end are Tombstones except the one before the end, which
// is Demoted; the end is Active.
func moves(n int) []chain.Member {
	ref := func(i int) chain.Ref {
		site := siteA
		if i%2 == 0 {
			site = siteB
		}
		return chain.Ref{Cluster: site, Volume: volume(i)}
	}
	root := ref(1)
	var out []chain.Member
	for i := 1; i <= n+1; i++ {
		m := chain.Member{Ref: ref(i), Root: root, Generation: uint32(i - 1), State: chain.Tombstone}
		if i > 1 {
			m.Predecessor = ref(i - 1)
		}
		if i <= n {
			m.Successor = ref(i + 1)
		}
		switch i {
		case n + 1:
			m.State = chain.Active
		case n:
			m.State = chain.Demoted
		}
		out = append(out, m)
	}
	return out
}
