package site_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sitecontroller "github.com/baton-dr/baton/controllers/site"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// This file is a small world of two sites for the operator's tests: each site's
// core runs over a twin store (the core's MemoryStore and the CRD Store side by
// side, every read compared), peers reach each other unless cut off, and
// "paper" nodes keep dataset and snapshot names and obey each NodeSpec as the
// node agent does. It is a slimmer copy of storage/core's own test harness,
// which a test package cannot import.

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

type world struct {
	t     *testing.T
	clock *clock
	sites map[chain.ClusterID]*core.Site
	twins map[chain.ClusterID]*twinStore
	cut   map[chain.ClusterID]bool
	nodes []*paperNode
	ids   int
	guids int
}

type paperNode struct {
	cluster  chain.ClusterID
	name     string
	datasets map[string][]core.SnapshotInfo
	sent     []core.SendResult
}

// newWorld builds sites A and B; each keeps its CRD records through c in its
// own namespace, its nodes (a1, a2 / b1, b2) created as StorageNodes first.
func newWorld(t *testing.T, c client.Client, namespaces map[chain.ClusterID]string) *world {
	w := &world{t: t, clock: &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		sites: map[chain.ClusterID]*core.Site{}, twins: map[chain.ClusterID]*twinStore{}, cut: map[chain.ClusterID]bool{}}
	for _, cluster := range []chain.ClusterID{clusterA, clusterB} {
		letter := strings.ToLower(string(cluster[0]))
		name := "site-" + letter
		crd, err := sitecontroller.NewStore(sitecontroller.StoreConfig{Client: c, Namespace: namespaces[cluster],
			Cluster: cluster, ClusterName: name, Context: testContext(t)})
		w.must(err)
		w.twins[cluster] = &twinStore{t: t, memory: core.NewMemoryStore(), crd: crd}
		s, err := core.New(core.Config{Cluster: cluster, Interval: time.Minute, Retention: 2,
			NewVolumeID: func() chain.VolumeID {
				w.ids++
				return chain.VolumeID(fmt.Sprintf("%s0000000-0000-4000-8000-%012d", letter, w.ids))
			}}, w.twins[cluster], peers{w: w, self: cluster}, w.clock)
		w.must(err)
		w.sites[cluster] = s
		for i := 1; i <= 2; i++ {
			n := &paperNode{cluster: cluster, name: fmt.Sprintf("%s%d", letter, i), datasets: map[string][]core.SnapshotInfo{}}
			node := storageNode(namespaces[cluster], n.name)
			node.Spec.Cluster = name
			w.must(c.Create(testContext(t), node))
			// The memory twin has no deployment flow: its node joins by a put.
			w.must(w.twins[cluster].memory.PutNode(core.Node{Name: n.name, Schedulable: true}))
			w.nodes = append(w.nodes, n)
			w.must(s.Report(core.NodeStatus{Node: n.name, Address: n.name + ":7900",
				Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}}))
		}
	}
	return w
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

// peers routes one site's calls to the other, unless either is cut off.
type peers struct {
	w    *world
	self chain.ClusterID
}

func (p peers) to(c chain.ClusterID) (*core.Site, error) {
	if p.w.cut[p.self] || p.w.cut[c] {
		return nil, fmt.Errorf("%s -> %s: %w", p.self[:8], c[:8], chain.ErrUnreachable)
	}
	return p.w.sites[c], nil
}

func (p peers) Handover(source chain.Ref) (core.Handover, error) {
	s, err := p.to(source.Cluster)
	if err != nil {
		return core.Handover{}, err
	}
	return s.Handover(source)
}

func (p peers) LearnSuccessor(member, successor chain.Ref) error {
	s, err := p.to(member.Cluster)
	if err != nil {
		return err
	}
	return s.LearnSuccessor(member, successor)
}

func (p peers) PrepareReceive(target chain.ClusterID, r core.ReceiveRequest) ([]core.Receiver, error) {
	s, err := p.to(target)
	if err != nil {
		return nil, err
	}
	return s.PrepareReceive(r)
}

func (p peers) Holdings(c chain.ClusterID, root chain.Ref) ([]string, error) {
	s, err := p.to(c)
	if err != nil {
		return nil, err
	}
	return s.Holdings(root)
}

// run lets d pass in steps of one second: every site ticks, every node applies
// its spec and reports.
func (w *world) run(d time.Duration) {
	w.t.Helper()
	for end := w.clock.now.Add(d); w.clock.now.Before(end); w.clock.now = w.clock.now.Add(time.Second) {
		for _, c := range []chain.ClusterID{clusterA, clusterB} {
			w.must(w.sites[c].Tick())
		}
		for _, n := range w.nodes {
			w.apply(n)
		}
	}
}

func (w *world) apply(n *paperNode) {
	w.t.Helper()
	s := w.sites[n.cluster]
	spec, err := s.Spec(n.name)
	w.must(err)
	for _, v := range spec.Volumes {
		if _, ok := n.datasets[v.Dataset]; !ok {
			n.datasets[v.Dataset] = nil
		}
		for _, name := range v.Snapshots {
			if !slices.ContainsFunc(n.datasets[v.Dataset], func(s core.SnapshotInfo) bool { return s.Name == name }) {
				w.guids++
				n.datasets[v.Dataset] = append(n.datasets[v.Dataset], core.SnapshotInfo{Name: name, GUID: fmt.Sprintf("g%d", w.guids)})
			}
		}
		n.datasets[v.Dataset] = slices.DeleteFunc(n.datasets[v.Dataset], func(s core.SnapshotInfo) bool {
			return slices.Contains(v.Prune, s.Name)
		})
	}
	for _, d := range spec.Destroy {
		delete(n.datasets, d)
	}
	for _, send := range spec.Sends {
		n.sent = append(n.sent, w.ship(n, send))
	}
	status := core.NodeStatus{Node: n.name, Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}, Sent: n.sent}
	for _, name := range slices.Sorted(maps.Keys(n.datasets)) {
		status.Datasets = append(status.Datasets, core.DatasetStatus{Name: name, Snapshots: slices.Clone(n.datasets[name])})
	}
	w.must(s.Report(status))
	n.sent = nil
}

// ship delivers a stream to every receiver the way zfs recv takes it.
func (w *world) ship(from *paperNode, send core.SendSpec) core.SendResult {
	result := core.SendResult{Dataset: send.Dataset, Snapshot: send.Snapshot, Target: send.Target,
		Bytes: 4096, Started: w.clock.now.Add(-1500 * time.Millisecond), Finished: w.clock.now.Add(-7)}
	if w.cut[from.cluster] || w.cut[send.Target] {
		result.Error = "connection refused"
		return result
	}
	for _, r := range send.Receivers {
		to := w.node(send.Target, r.Node)
		snap := core.SnapshotInfo{Name: send.Snapshot, GUID: send.GUID}
		existing, exists := to.datasets[send.TargetDataset]
		switch {
		case exists && slices.Contains(existing, snap):
		case send.Base == "" || strings.Contains(send.Base, "@"):
			to.datasets[send.TargetDataset] = []core.SnapshotInfo{snap}
		case !exists || len(existing) == 0 || existing[len(existing)-1].GUID != send.BaseGUID:
			result.Error, result.NoBase = "most recent snapshot does not match incremental source", true
			return result
		default:
			to.datasets[send.TargetDataset] = append(existing, snap)
		}
	}
	return result
}

func (w *world) node(c chain.ClusterID, name string) *paperNode {
	for _, n := range w.nodes {
		if n.cluster == c && n.name == name {
			return n
		}
	}
	w.t.Fatalf("no node %s on %s", name, c)
	return nil
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
