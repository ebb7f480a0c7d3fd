package real

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/baton-dr/baton/bed"
)

// cutRegistry is what every bed of this process has cut, by its chaos
// table. Beds that run side by side (batonctl scenario run --side-by-side)
// share the sites' nodes: a site one bed cuts off is cut off for the
// others too -- their hub, this process, no longer reaches it (Bed.reaches)
// -- and a table on a node that no bed here owns is a crashed run's. It
// keeps when each table held cuts (spans), for the beds beside it to
// count as faults (Bed.FaultsBeside), even once the table is released.
type cutRegistry struct {
	mu      sync.Mutex
	byTable map[string][]bed.Path
	spans   map[string][]bed.Window
}

// inForce is the process's registry.
var inForce = newCutRegistry()

func newCutRegistry() *cutRegistry {
	return &cutRegistry{byTable: map[string][]bed.Path{}, spans: map[string][]bed.Window{}}
}

// own registers a bed's table, with nothing cut yet.
func (r *cutRegistry) own(table string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byTable[table] = nil
}

// release forgets a bed's table once it has lifted its cuts.
func (r *cutRegistry) release(table string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byTable, table)
}

// owns tells whether a bed of this process owns the table.
func (r *cutRegistry) owns(table string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.byTable[table]
	return ok
}

// set records the paths the table's bed has cut at now: a span opens when
// the first is cut and closes when the last is healed.
func (r *cutRegistry) set(table string, cuts []bed.Path, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	spans := r.spans[table]
	open := len(spans) > 0 && spans[len(spans)-1].End.IsZero()
	switch {
	case len(cuts) > 0 && !open:
		r.spans[table] = append(spans, bed.Window{Start: now})
	case len(cuts) == 0 && open:
		spans[len(spans)-1].End = now
	}
	r.byTable[table] = slices.Clone(cuts)
}

// change makes the table's cuts what cuts say by apply, keeping the
// registry on the safe side of the nodes: a path newly cut counts as cut
// before apply holds it (a bed beside stops reaching it at once), and a
// path lifted counts as cut until apply returned -- under load removing the
// rules took 35 s, during which a bed beside that already believed the path
// up ran its move's limit against a cut (issue 40). A failed apply leaves
// both counted.
func (r *cutRegistry) change(table string, cuts []bed.Path, apply func() error, now func() time.Time) error {
	r.mu.Lock()
	both := append(slices.Clone(r.byTable[table]), cuts...)
	r.mu.Unlock()
	slices.SortFunc(both, comparePaths)
	r.set(table, slices.Compact(both), now())
	if err := apply(); err != nil {
		return err
	}
	r.set(table, cuts, now())
	return nil
}

func comparePaths(x, y bed.Path) int {
	return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To))
}

// spansBeside are the spans in which the other tables held cuts that were
// still in force at or after since, in the order they began; a span still
// open has no End.
func (r *cutRegistry) spansBeside(table string, since time.Time) []bed.Window {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []bed.Window
	for t, spans := range r.spans {
		if t == table {
			continue
		}
		for _, s := range spans {
			if s.End.IsZero() || !s.End.Before(since) {
				out = append(out, s)
			}
		}
	}
	slices.SortFunc(out, func(x, y bed.Window) int { return x.Start.Compare(y.Start) })
	return out
}

// others are the paths the other beds have cut, sorted, each once.
func (r *cutRegistry) others(table string) []bed.Path {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []bed.Path
	for t, cuts := range r.byTable {
		if t != table {
			out = append(out, cuts...)
		}
	}
	slices.SortFunc(out, comparePaths)
	return slices.Compact(out)
}

// reachedThrough tells whether the hub reaches site past cuts
// (bed.HubReaches).
func reachedThrough(cuts []bed.Path, site string) bool {
	return bed.HubReaches(site, func(path bed.Path) bool { return slices.Contains(cuts, path) })
}
