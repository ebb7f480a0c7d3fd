package core_test

import (
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
)

// The tests run two sites' cores, each over a memory store that faults on
// demand, in coretest's world of paper nodes; cut cuts a site off from the
// other and from its nodes' streams.

const (
	clusterA = coretest.ClusterA
	clusterB = coretest.ClusterB
)

type world struct {
	*coretest.World
	t      *testing.T
	sites  map[chain.ClusterID]*core.Site
	stores map[chain.ClusterID]*faultyStore
	cut    map[chain.ClusterID]bool
}

func newWorld(t *testing.T) *world { return newWorldOf(t, clusterA, clusterB) }

// newWorldOf is a world of the sites named, each with two nodes.
func newWorldOf(t *testing.T, clusters ...chain.ClusterID) *world {
	w := &world{World: coretest.NewWorld(), t: t, sites: map[chain.ClusterID]*core.Site{},
		stores: map[chain.ClusterID]*faultyStore{}, cut: map[chain.ClusterID]bool{}}
	w.Reachable = w.reachable
	for _, c := range clusters {
		w.stores[c] = &faultyStore{Store: core.NewMemoryStore()}
		peers := coretest.Peers{Self: c, Sites: func(c chain.ClusterID) *core.Site { return w.sites[c] }, Reachable: w.reachable}
		s, err := core.New(core.Config{Cluster: c, Interval: time.Minute, Retention: 2, NewVolumeID: coretest.VolumeIDs(c)},
			w.stores[c], peers, w.Clock)
		if err != nil {
			t.Fatal(err)
		}
		w.sites[c] = s
		w.must(w.AddSite(c, s, 2, func(node string) string { return node }))
	}
	return w
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

// create makes a volume on site s, where it must succeed.
func (w *world) create(s *core.Site, name string, shape core.Shape) core.Volume {
	w.t.Helper()
	v, err := s.CreateVolume(core.CreateRequest{Name: name, Shape: shape})
	w.must(err)
	return v
}

// protect pairs A's volume v with B and runs until its first snapshots
// have shipped.
func (w *world) protect(v core.Volume) core.Volume {
	w.t.Helper()
	_, err := w.sites[clusterA].Enable(v.Ref, clusterB)
	w.must(err)
	w.run(3 * time.Minute)
	return v
}

// relocate ends a planned relocation of v's chain from A to B: A's handover
// names the final snapshot, and B's fail-over without force must clone the
// successor from exactly that snapshot.
func (w *world) relocate(v core.Volume) {
	w.t.Helper()
	h, err := w.sites[clusterA].Handover(v.Ref)
	w.must(err)
	clone, err := w.sites[clusterB].Failover(v.Ref, false)
	w.must(err)
	if h.Final == "" || clone.Origin.GUID != h.Final {
		w.t.Fatalf("the clone starts from %s, the source's final snapshot is %q", clone.Origin.GUID, h.Final)
	}
}

func (w *world) reachable(from, to chain.ClusterID) bool { return !w.cut[from] && !w.cut[to] }

// Members makes the world a chain.Directory seen from nowhere in particular.
func (w *world) Members(c chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	if w.cut[c] {
		return nil, chain.ErrUnreachable
	}
	return w.sites[c].Members(root)
}

// run lets d pass in steps of one second: every site ticks, every node
// applies its spec and reports.
func (w *world) run(d time.Duration) {
	w.t.Helper()
	w.must(w.Run(d))
}

// node finds a paper node, or fails the test.
func (w *world) node(c chain.ClusterID, name string) *coretest.Node {
	w.t.Helper()
	n := w.Node(c, name)
	if n == nil {
		w.t.Fatalf("no node %s on %s", name, c)
	}
	return n
}

func (w *world) resolve(root chain.Ref) chain.Resolution {
	w.t.Helper()
	r, err := chain.Resolve(w, []chain.ClusterID{clusterA, clusterB}, root)
	w.must(err)
	return r
}
