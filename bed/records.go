package bed

import (
	"slices"
	"strings"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Records are every chain's members as all the sites' API servers record
// them, by the chain's root: the omniscient view no component has, which a
// bed's checkers judge and its report draws. It answers chain walks as a
// chain.Directory.
type Records map[chain.Ref][]chain.Member

// Roots are the chains' roots, in the order of their names.
func (r Records) Roots() []chain.Ref {
	roots := make([]chain.Ref, 0, len(r))
	for root := range r {
		roots = append(roots, root)
	}
	slices.SortFunc(roots, func(a, b chain.Ref) int { return strings.Compare(a.String(), b.String()) })
	return roots
}

// Members are the chain's members on cluster.
func (r Records) Members(cluster chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	var out []chain.Member
	for _, m := range r[root] {
		if m.Ref.Cluster == cluster {
			out = append(out, m)
		}
	}
	return out, nil
}

// Check runs checker over every chain and returns the problems it finds,
// chain by chain in the order of Roots.
func (r Records) Check(checker *chain.Checker) []error {
	var problems []error
	for _, root := range r.Roots() {
		problems = append(problems, checker.Check(root, r[root])...)
	}
	return problems
}

// Draw draws every chain as the sites record it: clusters are the sites'
// clusters, siteOf names a cluster's site in the scenario ("" for none of
// the bed's), and pairings are the sites' pairings by their source, which
// give each member its last sync.
func (r Records) Draw(clusters []chain.ClusterID, siteOf func(chain.ClusterID) string, pairings map[chain.Ref]core.Pairing) ([]reports.Chain, error) {
	var out []reports.Chain
	for _, root := range r.Roots() {
		walk, err := chain.Resolve(r, clusters, root)
		if err != nil {
			return nil, err
		}
		c := reports.Chain{Handle: root.String()}
		for _, m := range walk.Walk {
			member := reports.Member{Ref: m.Ref.String(), Site: siteOf(m.Ref.Cluster), Generation: m.Generation, State: m.State.String()}
			if p, ok := pairings[m.Ref]; ok {
				member.LastSync = p.Last.At
			}
			c.Members = append(c.Members, member)
		}
		out = append(out, c)
	}
	return out, nil
}
