package real

import (
	"cmp"
	"slices"
	"sync"

	"github.com/baton-dr/baton/bed"
)

// cutRegistry is what every bed of this process has cut, by its chaos
// table. Beds that run side by side (batonctl scenario run --side-by-side)
// share the sites' nodes: a site one bed cuts off is cut off for the
// others too -- their hub, this process, no longer reaches it (Bed.reaches)
// -- and a table on a node that no bed here owns is a crashed run's.
type cutRegistry struct {
	mu      sync.Mutex
	byTable map[string][]bed.Path
}

// inForce is the process's registry.
var inForce = &cutRegistry{byTable: map[string][]bed.Path{}}

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

// set records the paths the table's bed has cut now.
func (r *cutRegistry) set(table string, cuts []bed.Path) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byTable[table] = slices.Clone(cuts)
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
	slices.SortFunc(out, func(x, y bed.Path) int { return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.To, y.To)) })
	return slices.Compact(out)
}

// reachedThrough tells whether the hub reaches site past cuts
// (bed.HubReaches).
func reachedThrough(cuts []bed.Path, site string) bool {
	return bed.HubReaches(site, func(path bed.Path) bool { return slices.Contains(cuts, path) })
}
