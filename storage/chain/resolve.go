package chain

import (
	"errors"
	"fmt"
	"slices"
)

// MaxHops bounds a walk. Real chains grow by one member per move and are never
// compacted; a few dozen members is a long-lived volume. The bound exists so that
// corrupt records end a walk with an error instead of a hang; it must never be
// small enough to cut a real chain short (an 8-hop bound once left a ninth move
// out of reach and a partitioned node attached the original volume).
const MaxHops = 256

var (
	// ErrCycle: following successors returns to a member already visited.
	ErrCycle = errors.New("replication chain loops")
	// ErrTooLong: the chain has more than MaxHops hops.
	ErrTooLong = errors.New("replication chain is longer than the walk bound")
	// ErrForked: one member has two different successors.
	ErrForked = errors.New("replication chain forks")
	// ErrForeignRecord: a cluster answered with a record that is not its own or
	// not of the chain it was asked about.
	ErrForeignRecord = errors.New("record does not belong to the cluster or chain asked")
	// ErrNoLocalMember: no member of the chain lives on a local cluster.
	ErrNoLocalMember = errors.New("no chain member on a local cluster")
)

// Resolution is what the reachable clusters record of one chain.
type Resolution struct {
	Root Ref
	// Walk lists the chain from the root to its end. A member whose cluster did
	// not answer appears with State Unknown, its place known from its neighbours.
	Walk []Member
	// Unreachable lists the clusters that did not answer, sorted.
	Unreachable []ClusterID
}

// End is the chain's last known member: the one holding the newest data. It is
// the member Promote, Resync and status address (rules 3 and 4). It may be
// Demoted (a relocation in progress) or Unknown (its cluster did not answer).
func (r Resolution) End() Member { return r.Walk[len(r.Walk)-1] }

// Confirmed reports whether no successor of End can be hidden: every cluster
// other than End's own answered. Successors live on the other site, so when that
// site answered, End is the end.
func (r Resolution) Confirmed() bool {
	end := r.End().Ref.Cluster
	for _, c := range r.Unreachable {
		if c != end {
			return false
		}
	}
	return true
}

// Recorded reports whether any cluster records the chain at all: a handle with
// no record anywhere has no relationship (rule 2's NotFound case).
func (r Resolution) Recorded() bool {
	return len(r.Walk) > 1 || r.Walk[0].State != Unknown
}

// Contains reports whether the chain records ref as one of its members.
func (r Resolution) Contains(ref Ref) bool {
	return slices.ContainsFunc(r.Walk, func(m Member) bool { return m.Ref == ref })
}

// LastLocal is the chain's last member on one of the local clusters (rule 1):
// what Demote and Disable act on. A secret that marks no cluster local keeps
// the old behaviour, the chain's end.
func (r Resolution) LastLocal(local []ClusterID) (Member, error) {
	if len(local) == 0 {
		return r.End(), nil
	}
	for i := len(r.Walk) - 1; i >= 0; i-- {
		if slices.Contains(local, r.Walk[i].Ref.Cluster) {
			return r.Walk[i], nil
		}
	}
	return Member{}, fmt.Errorf("%w: chain of %s has %d members on %v", ErrNoLocalMember, r.Root, len(r.Walk), clusters(r.Walk))
}

// Resolve asks every cluster what it records of root's chain and walks it from
// the root. Clusters that do not answer are listed, not fatal: resolution from
// the site holding the end must work while the other site is cut off (rule 6).
func Resolve(directory Directory, clusters []ClusterID, root Ref) (Resolution, error) {
	asked := slices.Clone(clusters)
	slices.Sort(asked)
	asked = slices.Compact(asked)

	records := map[Ref]Member{}
	var unreachable []ClusterID
	for _, cluster := range asked {
		members, err := directory.Members(cluster, root)
		if errors.Is(err, ErrUnreachable) {
			unreachable = append(unreachable, cluster)
			continue
		}
		if err != nil {
			return Resolution{}, fmt.Errorf("failed to read chain %s on cluster %s: %w", root, cluster, err)
		}
		if err := collect(records, cluster, root, members); err != nil {
			return Resolution{}, err
		}
	}
	next, err := links(records)
	if err != nil {
		return Resolution{}, err
	}
	walk, err := walkFrom(root, records, next)
	if err != nil {
		return Resolution{}, err
	}
	return Resolution{Root: root, Walk: walk, Unreachable: unreachable}, nil
}

// collect adds one cluster's answer, refusing records that are not its own.
func collect(records map[Ref]Member, cluster ClusterID, root Ref, members []Member) error {
	for _, m := range members {
		if m.Ref.Cluster != cluster || m.Root != root {
			return fmt.Errorf("%w: cluster %s asked for chain %s answered member %s of chain %s",
				ErrForeignRecord, cluster, root, m.Ref, m.Root)
		}
		if err := m.Validate(); err != nil {
			return fmt.Errorf("cluster %s: %w", cluster, err)
		}
		records[m.Ref] = m
	}
	return nil
}

// links maps each member to its successor, learned from either side: the
// member's own Successor field, or a later member's Predecessor field. A cut-off
// member does not know its successor; the successor always knows it.
func links(records map[Ref]Member) (map[Ref]Ref, error) {
	next := map[Ref]Ref{}
	link := func(from, to Ref) error {
		if prev, ok := next[from]; ok && prev != to {
			a, b := min(prev.String(), to.String()), max(prev.String(), to.String())
			return fmt.Errorf("%w: %s is followed by both %s and %s", ErrForked, from, a, b)
		}
		next[from] = to
		return nil
	}
	for _, ref := range sortedRefs(records) {
		m := records[ref]
		if !m.Successor.IsZero() {
			if err := link(m.Ref, m.Successor); err != nil {
				return nil, err
			}
		}
		if !m.Predecessor.IsZero() {
			if err := link(m.Predecessor, m.Ref); err != nil {
				return nil, err
			}
		}
	}
	return next, nil
}

// walkFrom follows successors from the root, guarded by the members visited and
// bounded by MaxHops.
func walkFrom(root Ref, records map[Ref]Member, next map[Ref]Ref) ([]Member, error) {
	member := func(ref Ref, predecessor Member) Member {
		if m, ok := records[ref]; ok {
			return m
		}
		// Placeholder for a member whose cluster did not answer.
		m := Member{Ref: ref, Root: root, State: Unknown}
		if ref != root {
			m.Predecessor = predecessor.Ref
			m.Generation = predecessor.Generation + 1
		}
		m.Successor = next[ref]
		return m
	}
	walk := []Member{member(root, Member{})}
	visited := map[Ref]bool{root: true}
	for cur := root; ; {
		to, ok := next[cur]
		if !ok || stopsShort(len(walk)-1) {
			return walk, nil
		}
		if visited[to] {
			return nil, fmt.Errorf("%w: %s returns to %s after %d hops", ErrCycle, cur, to, len(walk)-1)
		}
		if len(walk) > MaxHops {
			return nil, fmt.Errorf("%w: chain of %s exceeds %d hops", ErrTooLong, root, MaxHops)
		}
		visited[to] = true
		walk = append(walk, member(to, walk[len(walk)-1]))
		cur = to
	}
}

func sortedRefs(records map[Ref]Member) []Ref {
	refs := make([]Ref, 0, len(records))
	for ref := range records {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, CompareRefs)
	return refs
}

func clusters(walk []Member) []ClusterID {
	var out []ClusterID
	for _, m := range walk {
		out = append(out, m.Ref.Cluster)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
