package core_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// This file is a test double of the world around two sites' control planes:
// peers that reach each other unless cut off, and "paper" node agents that
// keep only dataset and snapshot names (no blocks) and obey each NodeSpec the
// way the real agent does, ZFS's receive rules included. The real agent and the
// simulated pools replace it in the simulation bed.

const (
	clusterA chain.ClusterID = "aaaaaaaa-0000-4000-8000-00000000000a"
	clusterB chain.ClusterID = "bbbbbbbb-0000-4000-8000-00000000000b"
)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

type world struct {
	t      *testing.T
	clock  *clock
	sites  map[chain.ClusterID]*core.Site
	stores map[chain.ClusterID]*faultyStore
	cut    map[chain.ClusterID]bool
	nodes  []*paperNode
	nextID int
	guids  int
	sends  []core.SendSpec // every stream the nodes were asked to ship, in order
}

type paperNode struct {
	cluster  chain.ClusterID
	name     string
	datasets map[string][]core.SnapshotInfo
	sent     []core.SendResult
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, clock: &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		sites: map[chain.ClusterID]*core.Site{}, stores: map[chain.ClusterID]*faultyStore{}, cut: map[chain.ClusterID]bool{}}
	for _, c := range []chain.ClusterID{clusterA, clusterB} {
		letter := strings.ToLower(string(c[0]))
		w.stores[c] = &faultyStore{Store: core.NewMemoryStore()}
		s, err := core.New(core.Config{Cluster: c, Interval: time.Minute, Retention: 2,
			NewVolumeID: func() chain.VolumeID {
				w.nextID++
				return chain.VolumeID(fmt.Sprintf("%s0000000-0000-4000-8000-%012d", letter, w.nextID))
			}}, w.stores[c], peers{w: w, self: c}, w.clock)
		if err != nil {
			t.Fatal(err)
		}
		w.sites[c] = s
		for i := 1; i <= 2; i++ {
			n := &paperNode{cluster: c, name: fmt.Sprintf("%s%d", letter, i), datasets: map[string][]core.SnapshotInfo{}}
			w.nodes = append(w.nodes, n)
			w.must(s.Report(core.NodeStatus{Node: n.name, Address: n.name,
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

func (w *world) reachable(from, to chain.ClusterID) bool { return !w.cut[from] && !w.cut[to] }

// peers routes one site's calls to the other site, unless either is cut off.
type peers struct {
	w    *world
	self chain.ClusterID
}

func (p peers) to(c chain.ClusterID) (*core.Site, error) {
	if !p.w.reachable(p.self, c) {
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

// Members makes the world a chain.Directory seen from nowhere in particular.
func (w *world) Members(c chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	if w.cut[c] {
		return nil, chain.ErrUnreachable
	}
	return w.sites[c].Members(root)
}

// run lets d pass in steps of one second: every reachable site ticks, every
// node of a reachable site applies its spec and reports.
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
			if v.MustExist {
				w.t.Fatalf("%s: volume %s held here before is gone: the agent must not create it", n.name, v.Dataset)
			}
			n.datasets[v.Dataset] = nil // a fresh volume or a clone: no snapshots of its own
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
		w.sends = append(w.sends, send)
		n.sent = append(n.sent, w.ship(n, send))
	}
	status := core.NodeStatus{Node: n.name, Usage: backend.Usage{SizeBytes: 100 << 30, FreeBytes: 100 << 30}, Sent: n.sent}
	for _, name := range sortedKeys(n.datasets) {
		status.Datasets = append(status.Datasets, core.DatasetStatus{Name: name, Snapshots: slices.Clone(n.datasets[name])})
	}
	w.must(s.Report(status))
	n.sent = nil
}

// ship delivers a stream to every receiver the way zfs recv would take it.
func (w *world) ship(from *paperNode, send core.SendSpec) core.SendResult {
	result := core.SendResult{Dataset: send.Dataset, Snapshot: send.Snapshot, Target: send.Target,
		Bytes: 4096, Started: w.clock.now, Finished: w.clock.now}
	if !w.reachable(from.cluster, send.Target) {
		result.Error = "connection refused"
		return result
	}
	for _, r := range send.Receivers {
		to := w.node(send.Target, r.Node)
		spec, err := w.sites[send.Target].Spec(to.name)
		w.must(err)
		open := slices.ContainsFunc(spec.Replicas, func(rs core.ReplicaSpec) bool { return rs.Dataset == send.TargetDataset && rs.Open })
		if !open {
			result.Error = "replica closed"
			return result
		}
		if err := receive(to, send); err != nil {
			result.Error, result.NoBase = err.Error(), strings.Contains(err.Error(), "does not match")
			return result
		}
	}
	return result
}

func receive(n *paperNode, send core.SendSpec) error {
	snap := core.SnapshotInfo{Name: send.Snapshot, GUID: send.GUID}
	existing, exists := n.datasets[send.TargetDataset]
	if exists && slices.Contains(existing, snap) {
		return nil // a retried stream that arrived before
	}
	switch {
	case send.Base == "":
		if exists {
			return fmt.Errorf("destination %s exists", send.TargetDataset)
		}
		n.datasets[send.TargetDataset] = []core.SnapshotInfo{snap}
	case strings.Contains(send.Base, "@"): // a clone stream: the base is found by GUID anywhere
		if exists {
			return fmt.Errorf("destination %s exists", send.TargetDataset)
		}
		if !n.holds(send.BaseGUID) {
			return fmt.Errorf("most recent snapshot does not match incremental source")
		}
		n.datasets[send.TargetDataset] = []core.SnapshotInfo{snap}
	default:
		if !exists || len(existing) == 0 || existing[len(existing)-1].GUID != send.BaseGUID {
			return fmt.Errorf("most recent snapshot of %s does not match incremental source", send.TargetDataset)
		}
		n.datasets[send.TargetDataset] = append(existing, snap)
	}
	return nil
}

func (n *paperNode) holds(guid string) bool {
	for _, snaps := range n.datasets {
		if slices.ContainsFunc(snaps, func(s core.SnapshotInfo) bool { return s.GUID == guid }) {
			return true
		}
	}
	return false
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (w *world) resolve(root chain.Ref) chain.Resolution {
	w.t.Helper()
	r, err := chain.Resolve(w, []chain.ClusterID{clusterA, clusterB}, root)
	w.must(err)
	return r
}
