package site_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
)

// This file is a small world of two sites for the operator's tests: each
// site's core runs over a twin store (the core's MemoryStore and the CRD Store
// side by side, every read compared), in the world of storage/core/coretest:
// peers that reach each other unless cut off, and paper nodes that obey each
// NodeSpec as the node agent does.

type world struct {
	*coretest.World
	t     *testing.T
	sites map[chain.ClusterID]*core.Site
	twins map[chain.ClusterID]*twinStore
	cut   map[chain.ClusterID]bool
}

// newWorld builds sites A and B; each keeps its CRD records through c in its
// own namespace, its nodes (a1, a2 / b1, b2) created as StorageNodes first.
func newWorld(t *testing.T, c client.Client, namespaces map[chain.ClusterID]string) *world {
	w := &world{World: coretest.NewWorld(), t: t, sites: map[chain.ClusterID]*core.Site{},
		twins: map[chain.ClusterID]*twinStore{}, cut: map[chain.ClusterID]bool{}}
	w.Reachable = func(from, to chain.ClusterID) bool { return !w.cut[from] && !w.cut[to] }
	// Nanosecond times, as the core records them: every record must carry
	// them through the CRDs.
	w.Shipping = func(now time.Time) (time.Time, time.Time) { return now.Add(-1500 * time.Millisecond), now.Add(-7) }
	for _, cluster := range []chain.ClusterID{clusterA, clusterB} {
		letter := strings.ToLower(string(cluster[0]))
		name := "site-" + letter
		crd, err := sitecontroller.NewStore(sitecontroller.StoreConfig{Client: c, Namespace: namespaces[cluster],
			Cluster: cluster, ClusterName: name, Context: testContext(t)})
		w.must(err)
		w.twins[cluster] = &twinStore{t: t, memory: core.NewMemoryStore(), crd: crd}
		s, err := core.New(core.Config{Cluster: cluster, Interval: time.Minute, Retention: 2, NewVolumeID: coretest.VolumeIDs(cluster)},
			w.twins[cluster], coretest.Peers{Self: cluster, Sites: w.site, Reachable: w.Reachable}, w.Clock)
		w.must(err)
		w.sites[cluster] = s
		for i := 1; i <= 2; i++ {
			node := storageNode(namespaces[cluster], fmt.Sprintf("%s%d", letter, i))
			node.Spec.Cluster = name
			w.must(c.Create(testContext(t), node))
			// The memory twin has no deployment flow: its node joins by a put.
			w.must(w.twins[cluster].memory.PutNode(core.Node{Name: node.Spec.NodeName, Schedulable: true}))
		}
		w.must(w.AddSite(cluster, s, 2, func(node string) string { return node + ":7900" }))
	}
	return w
}

func (w *world) site(c chain.ClusterID) *core.Site { return w.sites[c] }

// run lets d pass in steps of one second: every site ticks, every node
// applies its spec and reports.
func (w *world) run(d time.Duration) {
	w.t.Helper()
	w.must(w.Run(d))
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

// twinStore runs every call on both stores and compares what they answer.
type twinStore struct {
	t      *testing.T
	memory *core.MemoryStore
	crd    *sitecontroller.Store
	calls  int
}

func twinList[T any](s *twinStore, what string, memory func() ([]T, error), crd func() ([]T, error)) ([]T, error) {
	s.calls++
	want, wantErr := memory()
	got, err := crd()
	if (err == nil) != (wantErr == nil) {
		s.t.Errorf("%s: the CRD store says %v, the memory store %v", what, err, wantErr)
	}
	if dump(got) != dump(want) {
		s.t.Errorf("%s after %d calls differ:\nmemory %s\ncrd    %s", what, s.calls, dump(want), dump(got))
	}
	return got, err
}

func twinDo(s *twinStore, what string, memory, crd func() error) error {
	s.calls++
	wantErr, err := memory(), crd()
	if (err == nil) != (wantErr == nil) || errors.Is(err, core.ErrStoreNotFound) != errors.Is(wantErr, core.ErrStoreNotFound) {
		s.t.Errorf("%s: the CRD store says %v, the memory store %v", what, err, wantErr)
	}
	return err
}

func (s *twinStore) Volumes() ([]core.Volume, error) {
	return twinList(s, "volumes", s.memory.Volumes, s.crd.Volumes)
}
func (s *twinStore) Replicas() ([]core.Replica, error) {
	return twinList(s, "replicas", s.memory.Replicas, s.crd.Replicas)
}
func (s *twinStore) Pairings() ([]core.Pairing, error) {
	return twinList(s, "pairings", s.memory.Pairings, s.crd.Pairings)
}
func (s *twinStore) Nodes() ([]core.Node, error) {
	return twinList(s, "nodes", s.memory.Nodes, s.crd.Nodes)
}
func (s *twinStore) PutVolume(v core.Volume) error {
	return twinDo(s, "put volume", func() error { return s.memory.PutVolume(v) }, func() error { return s.crd.PutVolume(v) })
}
func (s *twinStore) RemoveVolume(r chain.Ref) error {
	return twinDo(s, "remove volume", func() error { return s.memory.RemoveVolume(r) }, func() error { return s.crd.RemoveVolume(r) })
}
func (s *twinStore) PutReplica(r core.Replica) error {
	return twinDo(s, "put replica", func() error { return s.memory.PutReplica(r) }, func() error { return s.crd.PutReplica(r) })
}
func (s *twinStore) RemoveReplica(r chain.Ref) error {
	return twinDo(s, "remove replica", func() error { return s.memory.RemoveReplica(r) }, func() error { return s.crd.RemoveReplica(r) })
}
func (s *twinStore) PutPairing(p core.Pairing) error {
	return twinDo(s, "put pairing", func() error { return s.memory.PutPairing(p) }, func() error { return s.crd.PutPairing(p) })
}
func (s *twinStore) RemovePairing(r chain.Ref) error {
	return twinDo(s, "remove pairing", func() error { return s.memory.RemovePairing(r) }, func() error { return s.crd.RemovePairing(r) })
}
func (s *twinStore) PutNode(n core.Node) error {
	return twinDo(s, "put node", func() error { return s.memory.PutNode(n) }, func() error { return s.crd.PutNode(n) })
}

func (w *world) resyncUntilReady(s *core.Site, end chain.Ref, source chain.ClusterID) {
	w.t.Helper()
	for range 20 {
		ready, err := s.Resync(end, source)
		if err != nil && !errors.Is(err, core.ErrPeerUnreachable) {
			w.t.Fatalf("resync %s: %v", end, err)
		}
		if ready {
			return
		}
		w.run(5 * time.Second)
	}
	w.t.Fatalf("resync of %s never became ready", end)
}
