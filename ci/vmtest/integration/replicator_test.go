package integration

import (
	"testing"

	"github.com/baton-dr/baton/storage/backend/replicatortest"
)

// TestConformanceOnRealDRBD runs replicatortest on the DRBD 8.4 pair. The
// suite's 3-node cases skip: 8.4 replicates between two nodes.
func TestConformanceOnRealDRBD(t *testing.T) {
	g := needGuests(t)
	replicatortest.Run(t, func(t *testing.T, nodes int) replicatortest.Site {
		if nodes > len(g.Nodes) || nodes > 2 {
			t.Skipf("DRBD %s replicates between two nodes; the %d-node case needs DRBD 9", g.Nodes[0].DRBD.Version(), nodes)
		}
		return NewSite(t, g)
	})
}
