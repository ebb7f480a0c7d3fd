package integration

import (
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// upPair brings a fresh resource up over a thin zvol of its name on every
// guest -- metadata created on a zvol that has none, up, connected -- and
// leaves both sides Inconsistent, where an initial sync starts. The test's
// end takes the resource down and destroys the zvols.
func upPair(t *testing.T, g *Guests, name string, sizeBytes uint64, minor uint32, port uint16) backend.ResourceConfig {
	t.Helper()
	config := pairConfig(g, name, minor, port)
	for _, n := range g.Nodes {
		must(t, n.Pool.CreateVolume(name, sizeBytes, backend.Thin), "CreateVolume on %s", n.Name)
		t.Cleanup(func() {
			_ = n.DRBD.Down(name)
			_ = n.Pool.DestroyVolume(name)
		})
		has, err := n.DRBD.HasMetadata(config)
		must(t, err, "HasMetadata on %s", n.Name)
		if has {
			t.Fatalf("a fresh zvol on %s has DRBD metadata", n.Name)
		}
		must(t, n.DRBD.CreateMetadata(config), "CreateMetadata on %s", n.Name)
		must(t, n.DRBD.Up(config), "Up on %s", n.Name)
	}
	a := g.Nodes[0]
	await(t, "the pair to connect", func() bool {
		s, err := a.DRBD.Status(name)
		return err == nil && len(s.Peers) == 1 && s.Peers[0].Connection == backend.Connected
	})
	return config
}

// skipInitialSync declares the fresh replicas identical (both hold zeros),
// as the node agent does for a new volume, and waits until both are
// UpToDate.
func skipInitialSync(t *testing.T, g *Guests, name string) {
	t.Helper()
	a, b := g.Nodes[0], g.Nodes[1]
	must(t, a.DRBD.NewCurrentUUID(name, true), "new-current-uuid --clear-bitmap")
	await(t, "both UpToDate", func() bool { return upToDatePair(a.DRBD, name) && upToDatePair(b.DRBD, name) })
}
