//go:build baton_bugs

package bugs

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Carried: this build carries the seeded bugs (-tags baton_bugs).
const Carried = true

// switched is the selection Switch made; nil until it is called, when the
// environment's holds. A process-wide value on purpose: each bug lives in
// one place deep in a package, and the selection reaches it without being
// passed down every call path.
var switched atomic.Pointer[[]Name]

// fromEnv is the environment's selection, read once; a selection FromEnv
// refuses switches nothing on (the binaries refuse to start with it).
var fromEnv = sync.OnceValue(func() []Name {
	names, _ := FromEnv()
	return names
})

// On reports whether the bug is switched on in this process.
func On(name Name) bool {
	if names := switched.Load(); names != nil {
		return slices.Contains(*names, name)
	}
	return slices.Contains(fromEnv(), name)
}

// Switch switches exactly these bugs on (none: every bug off) for the runs
// that follow, until restore. Runs of one process share it: switch before
// they start, restore after they end.
func Switch(names ...Name) (restore func(), err error) {
	for _, name := range names {
		if _, err := Find(string(name)); err != nil {
			return nil, err
		}
	}
	selection := slices.Clone(names)
	previous := switched.Swap(&selection)
	return func() { switched.Store(previous) }, nil
}

// Selected lists the bugs switched on in this process.
func Selected() []Name {
	var out []Name
	for _, b := range catalogue {
		if On(b.Name) {
			out = append(out, b.Name)
		}
	}
	return out
}
