package bed

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/baton-dr/baton/reports"
)

// Hub is the hub's scoped name.
const Hub = "hub"

// Path is the way from one endpoint to another; cut, what From sends To is
// lost.
type Path struct{ From, To string }

// Partitions are the paths a bed cut between the hub and its sites, and its
// Partitioner over them: the rule the local and the real beds share, which
// differ only in how they make the paths what the rule says (Apply). The
// simulation keeps the same rule in its network (sim/network), where nodes
// are endpoints too.
//
// A partition cuts the path from a to b, and the way back too when both
// ways; it adds to the cuts in force, so a one-way partition after a
// two-way one leaves both paths cut. Heal restores both paths between two
// endpoints, HealAll every path. The hub reaches a site (Reaches) only while
// neither path between them is cut: a call needs both.
//
// The endpoints are the hub and the sites. A node is no endpoint of its own
// here: a partition that names one is recorded as a violation, so that no
// scenario passes believing it happened.
//
// The zero value's cuts are none, with every path whole. It is not safe for
// concurrent use.
type Partitions struct {
	// Sites are the bed's sites.
	Sites []string
	// Apply makes the bed's paths what cuts say: each path in cuts cut
	// (sorted, From then To), every other one whole. It is called only when
	// the cuts changed or the last Apply failed.
	Apply func(cuts []Path) error
	// Event puts an entry on the bed's timeline; Violate records a broken
	// invariant (as ramen.Driver's).
	Event   func(site string, kind reports.EventKind, format string, args ...any)
	Violate func(invariant, message string)

	cut map[Path]bool
	// stale: the last Apply failed, so the paths may differ from cut.
	stale bool
}

var _ Partitioner = (*Partitions)(nil)

// Partition cuts a from b, one way or both.
func (p *Partitions) Partition(a, b string, bothWays bool) {
	p.Event(a, reports.EventPartition, "partition %s from %s (both ways: %v)", a, b, bothWays)
	if err := p.Cut(a, b, bothWays); err != nil {
		p.Violate("bed: partition failed", err.Error())
	}
}

// Heal restores both paths between a and b.
func (p *Partitions) Heal(a, b string) {
	p.Event(a, reports.EventPartition, "heal %s and %s", a, b)
	if err := p.Mend(a, b); err != nil {
		p.Violate("bed: heal failed", err.Error())
	}
}

// HealAll restores every path.
func (p *Partitions) HealAll() {
	p.Event("", reports.EventPartition, "heal every partition")
	if err := p.Clear(); err != nil {
		p.Violate("bed: heal failed", err.Error())
	}
}

// Cut is Partition with its error returned and nothing on the timeline,
// for a bed's own use (a benchmark's partition).
func (p *Partitions) Cut(a, b string, bothWays bool) error {
	if err := p.endpoints(a, b); err != nil {
		return fmt.Errorf("partition %s from %s: %w", a, b, err)
	}
	paths := []Path{{a, b}}
	if bothWays {
		paths = append(paths, Path{b, a})
	}
	return p.set(paths, true)
}

// Mend is Heal with its error returned and nothing on the timeline.
func (p *Partitions) Mend(a, b string) error {
	if err := p.endpoints(a, b); err != nil {
		return fmt.Errorf("heal %s and %s: %w", a, b, err)
	}
	return p.set([]Path{{a, b}, {b, a}}, false)
}

// Clear is HealAll with its error returned and nothing on the timeline, for
// a bed's Close.
func (p *Partitions) Clear() error {
	var paths []Path
	for path := range p.cut {
		paths = append(paths, path)
	}
	return p.set(paths, false)
}

// Reaches tells whether the hub reaches site: neither path between them is
// cut.
func (p *Partitions) Reaches(site string) bool {
	return HubReaches(site, func(path Path) bool { return p.cut[path] })
}

// HubReaches is the rule of Reaches over any record of cuts: the hub reaches
// site while neither path between them is cut.
func HubReaches(site string, cut func(Path) bool) bool {
	return !cut(Path{Hub, site}) && !cut(Path{site, Hub})
}

// endpoints checks that a and b are endpoints of the bed.
func (p *Partitions) endpoints(a, b string) error {
	for _, name := range []string{a, b} {
		if name != Hub && !slices.Contains(p.Sites, name) {
			return fmt.Errorf("%q is no endpoint: the bed cuts between %s and %s only, no node of its own", name, Hub,
				strings.Join(p.Sites, ", "))
		}
	}
	return nil
}

// set cuts (cut) or restores the paths -- a path from an endpoint to itself
// is never cut -- then has the bed apply the cuts if they changed, or if the
// last Apply failed.
func (p *Partitions) set(paths []Path, cut bool) error {
	changed := false
	for _, path := range paths {
		if path.From == path.To || p.cut[path] == cut {
			continue
		}
		changed = true
		if cut {
			if p.cut == nil {
				p.cut = map[Path]bool{}
			}
			p.cut[path] = true
		} else {
			delete(p.cut, path)
		}
	}
	if !changed && !p.stale {
		return nil
	}
	cuts := make([]Path, 0, len(p.cut))
	for path := range p.cut {
		cuts = append(cuts, path)
	}
	slices.SortFunc(cuts, func(x, y Path) int { return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To)) })
	err := p.Apply(cuts)
	p.stale = err != nil
	return err
}
