package bed

import (
	"fmt"
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

// SiteStore is what a bed reads of a site's records (controllers/site's
// Store over the site's API server).
type SiteStore interface {
	Volumes() ([]core.Volume, error)
	Pairings() ([]core.Pairing, error)
}

// RecordedSite is one of a bed's sites, as its records are read: its name in
// the scenario, its storage cluster and its records.
type RecordedSite struct {
	Name    string
	Cluster chain.ClusterID
	Store   SiteStore
}

// RecordedSites are a bed's sites as their records are read, and which
// chains are the bed's: a non-nil Keep keeps only the chains whose root it
// holds (a bed whose sites outlive its runs keeps the run's).
type RecordedSites struct {
	Sites []RecordedSite
	Keep  func(root chain.Ref) bool
}

// Records gathers every chain's members from every site's records.
func (r RecordedSites) Records() (Records, error) {
	out := Records{}
	for _, s := range r.Sites {
		volumes, err := s.Store.Volumes()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
		for _, v := range volumes {
			if r.Keep == nil || r.Keep(v.Root) {
				out[v.Root] = append(out[v.Root], v.Member)
			}
		}
	}
	return out, nil
}

// Chains draws every chain the sites record (Records, then Draw): a bed's
// Chains.
func (r RecordedSites) Chains() ([]reports.Chain, error) {
	records, err := r.Records()
	if err != nil {
		return nil, err
	}
	return records.Draw(r.Sites)
}

// Draw draws every chain as the sites record it, each member named by its
// site and given its pairing's last sync.
func (r Records) Draw(sites []RecordedSite) ([]reports.Chain, error) {
	var clusters []chain.ClusterID
	names := map[chain.ClusterID]string{}
	pairings := map[chain.Ref]core.Pairing{}
	for _, s := range sites {
		clusters = append(clusters, s.Cluster)
		names[s.Cluster] = s.Name
		ps, err := s.Store.Pairings()
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			pairings[p.Source] = p
		}
	}
	var out []reports.Chain
	for _, root := range r.Roots() {
		walk, err := chain.Resolve(r, clusters, root)
		if err != nil {
			return nil, err
		}
		c := reports.Chain{Handle: root.String()}
		for _, m := range walk.Walk {
			member := reports.Member{Ref: m.Ref.String(), Site: names[m.Ref.Cluster], Generation: m.Generation, State: m.State.String()}
			if p, ok := pairings[m.Ref]; ok {
				member.LastSync = p.Last.At
			}
			c.Members = append(c.Members, member)
		}
		out = append(out, c)
	}
	return out, nil
}
