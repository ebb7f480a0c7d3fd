//go:build baton_bugs

package core

import "github.com/baton-dr/baton/internal/bugs"

// findsUndecided with reprovision-missing does not find a volume whose
// record lacks its DRBD values, as the seed's driver did not during the
// switch: CreateVolume creates it anew, a fresh resource on freshly
// allocated ports, minors and node-ids, not initialized.
func findsUndecided() bool { return !bugs.On(bugs.ReprovisionMissing) }
