//go:build baton_bugs

package chain

import "github.com/baton-dr/baton/internal/bugs"

// walk8Hops is the bound the first seed's walks had.
const walk8Hops = 8

// stopsShort with walk-8 stops a walk after 8 hops, as the seed's walks
// did: the ninth move's member is out of reach, and the walk's last member
// passes for the chain's end.
func stopsShort(hops int) bool { return bugs.On(bugs.Walk8) && hops >= walk8Hops }
