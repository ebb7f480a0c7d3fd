package drbd

import (
	"fmt"

	"github.com/baton-dr/baton/storage/backend"
)

// checkInvariants panics when the model broke one of its own rules; it runs
// after every state change. Sorting is not needed: it reports the first
// breach it finds and stops.
func (c *Cluster) checkInvariants() {
	for key, conn := range c.conns {
		a, b := c.replicaOf(key.resource, key.a), c.replicaOf(key.resource, key.b)
		if a == nil || b == nil {
			panic(fmt.Sprintf("drbd: %v: connected to a replica that is not up", key))
		}
		if a.role == backend.Primary && b.role == backend.Primary {
			panic(fmt.Sprintf("drbd: %v: two connected primaries", key))
		}
		if conn.sync == nil && a.disk() == backend.UpToDate && b.disk() == backend.UpToDate &&
			a.md.sb.current != b.md.sb.current {
			panic(fmt.Sprintf("drbd: %v: connected UpToDate replicas of different generations", key))
		}
	}
	for _, name := range c.names {
		minors, ports := map[uint32]string{}, map[uint16]string{}
		for resource, r := range c.nodes[name].up {
			if other, ok := minors[r.config.Minor]; ok {
				panic(fmt.Sprintf("drbd: %s: minor %d used by %s and %s", name, r.config.Minor, other, resource))
			}
			if other, ok := ports[r.config.Port]; ok {
				panic(fmt.Sprintf("drbd: %s: port %d used by %s and %s", name, r.config.Port, other, resource))
			}
			minors[r.config.Minor], ports[r.config.Port] = resource, resource
		}
	}
}
