package integration

import (
	"testing"

	"github.com/baton-dr/baton/node/drbd"
	"github.com/baton-dr/baton/node/zfs"
	"github.com/baton-dr/baton/storage/backend"
)

// upPair brings a fresh resource up over a thin zvol of its name on every
// guest -- metadata created on a zvol that has none, up, connected -- and
// leaves both sides Inconsistent, where an initial sync starts. The test's
// end takes the resource down and destroys the zvols.
// upReplica makes the node's zvol for config's resource (a fresh one: no
// DRBD metadata), creates the metadata and brings the resource up; the
// test's end takes it down and destroys the zvol.
func upReplica(t *testing.T, node string, pool *zfs.Pool, r *drbd.Replicator, config backend.ResourceConfig, sizeBytes uint64) {
	t.Helper()
	name := config.Name
	must(t, pool.CreateVolume(name, sizeBytes, backend.Thin), "CreateVolume on %s", node)
	t.Cleanup(func() {
		_ = r.Down(name)
		_ = pool.DestroyVolume(name)
	})
	has, err := r.HasMetadata(config)
	must(t, err, "HasMetadata on %s", node)
	if has {
		t.Fatalf("a fresh zvol on %s has DRBD metadata", node)
	}
	must(t, r.CreateMetadata(config), "CreateMetadata on %s", node)
	must(t, r.Up(config), "Up on %s", node)
}

func upPair(t *testing.T, g *Guests, name string, sizeBytes uint64, minor uint32, port uint16) backend.ResourceConfig {
	t.Helper()
	config := pairConfig(g, name, minor, port)
	for _, n := range g.Nodes {
		upReplica(t, n.Name, n.Pool, n.DRBD, config, sizeBytes)
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
