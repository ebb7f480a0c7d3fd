//go:build !baton_bugs

package bugs

import "fmt"

// Carried: a default build carries no seeded bug; bugs_on.go's hooks are
// not compiled in, and nothing can switch one on.
const Carried = false

// Switch refuses: a default build carries no bug to switch on. Switching
// every bug off is what it does already.
func Switch(names ...Name) (restore func(), err error) {
	if len(names) == 0 {
		return func() {}, nil
	}
	return nil, fmt.Errorf("bug %s: %w", names[0], errNotCarried)
}

// Selected lists the bugs switched on: none.
func Selected() []Name { return nil }
