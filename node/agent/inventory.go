package agent

import (
	"errors"
	"fmt"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
)

// Inventory reports what the node holds for the operator to adopt (core.Site.Adopt):
// every volume of its pool, whether DRBD metadata exists on it, and the
// configuration the kernel runs for it -- the live port, minor and node-ids,
// which no record is trusted over. It reads and changes nothing else.
func (a *Agent) Inventory(provisioning backend.Provisioning) (core.Inventory, error) {
	volumes, err := a.options.Pool.Volumes()
	if err != nil {
		return core.Inventory{}, fmt.Errorf("inventory of %s: %w", a.options.Node, err)
	}
	inv := core.Inventory{Node: a.options.Node, Provisioning: provisioning}
	drbd := a.options.Replicator
	for _, v := range volumes {
		found := core.Found{Volume: v}
		if drbd != nil {
			live, err := drbd.Show(v.Name)
			switch {
			case err == nil:
				found.Live = &live
			case !errors.Is(err, backend.ErrNotFound):
				return core.Inventory{}, fmt.Errorf("inventory of %s: %w", a.options.Node, err)
			}
			// dump-md reads the backing volume the configuration names.
			probe := backend.ResourceConfig{Name: v.Name, Nodes: []backend.ResourceNode{{Node: a.options.Node, Volume: v.Name}}}
			if found.Live != nil {
				probe = live
			}
			if found.HasMetadata, err = drbd.HasMetadata(probe); err != nil {
				return core.Inventory{}, fmt.Errorf("inventory of %s: %s: %w", a.options.Node, v.Name, err)
			}
		}
		inv.Found = append(inv.Found, found)
	}
	return inv, nil
}
