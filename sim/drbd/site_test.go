package drbd

import (
	"fmt"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/replicatortest"
)

// simSite is a site of test doubles around a Cluster; it is what the world
// will assemble from the real kernel, network and pools.
type simSite struct {
	t       testing.TB
	sched   *testScheduler
	links   *testLinks
	pools   map[string]*memPool
	names   []string
	cluster *Cluster
}

// awaitBound is how much simulated time Await lets pass before it gives up.
const awaitBound = 10 * time.Minute

func newSimSite(t testing.TB, nodes int, tweak func(*Options)) *simSite {
	s := &simSite{t: t, sched: newTestScheduler(), links: newTestLinks(), pools: map[string]*memPool{}}
	opts := Options{Site: "site-a", Scheduler: s.sched, Links: s.links}
	for i := range nodes {
		name := fmt.Sprintf("node-%d", i)
		pool := newMemPool()
		s.pools[name] = pool
		s.names = append(s.names, name)
		opts.Nodes = append(opts.Nodes, NodeOptions{Name: name, Open: pool.open})
	}
	if tweak != nil {
		tweak(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.cluster = c
	return s
}

func (s *simSite) Nodes() []string                           { return s.names }
func (s *simSite) Replicator(node string) backend.Replicator { return s.cluster.Node(node) }
func (s *simSite) Address(node string, port uint16) string   { return fmt.Sprintf("%s:%d", node, port) }

func (s *simSite) CreateVolume(node, volume string, sizeBytes uint64) error {
	return s.pools[node].create(volume, sizeBytes)
}

func (s *simSite) Partition(a, b string) {
	s.links.partition(a, b)
	s.cluster.Observe()
}

func (s *simSite) Heal(a, b string) {
	s.links.heal(a, b)
	s.cluster.Observe()
}

// Await runs the event queue one event at a time until cond holds, within
// awaitBound of simulated time. With nothing queued, time cannot change the
// outcome any more, so it answers at once.
func (s *simSite) Await(cond func() bool) bool {
	deadline := s.sched.now.Add(awaitBound)
	for s.sched.now.Before(deadline) {
		if cond() {
			return true
		}
		if !s.sched.step() {
			return cond()
		}
	}
	return cond()
}

func (s *simSite) Pass(d time.Duration) {
	s.sched.runFor(d)
	s.cluster.Observe()
}

func TestConformance(t *testing.T) {
	replicatortest.Run(t, func(t *testing.T, nodes int) replicatortest.Site {
		return newSimSite(t, nodes, nil)
	})
}

// crash stops a node the hard way: what its pool had not flushed is lost.
func (s *simSite) crash(node string) {
	s.cluster.Crash(node)
	s.pools[node].crash()
}
