package coretest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Two clusters, for worlds of two sites.
const (
	ClusterA chain.ClusterID = "aaaaaaaa-0000-4000-8000-00000000000a"
	ClusterB chain.ClusterID = "bbbbbbbb-0000-4000-8000-00000000000b"
)

// Epoch is when a world's clock starts.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Clock is a clock tests move by hand; safe for concurrent use (a test may
// tick a world in the background).
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts a clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// VolumeIDs names a site's new volumes in order: the cluster's first eight
// characters, then a counter, shaped as a UUID.
func VolumeIDs(cluster chain.ClusterID) func() chain.VolumeID {
	next := 0 // called under the site's own serialisation
	return func() chain.VolumeID {
		next++
		return chain.VolumeID(fmt.Sprintf("%s-0000-4000-8000-%012d", cluster[:8], next))
	}
}

// Site is what a paper node reaches of its site's control plane, and what
// the world ticks: the core itself (*core.Site), or the storage API over it.
type Site interface {
	Spec(node string) (core.NodeSpec, error)
	Report(status core.NodeStatus) error
	Tick() error
}

// Node is a paper node agent: the datasets it holds and their snapshots.
type Node struct {
	Cluster  chain.ClusterID
	Name     string
	Datasets map[string][]core.SnapshotInfo
	sent     []core.SendResult
}

// World is sites' control planes and their paper nodes on one clock.
type World struct {
	Clock *Clock
	// Sites are the control planes by cluster; Order is the order they tick.
	Sites map[chain.ClusterID]Site
	Order []chain.ClusterID
	Nodes []*Node
	// Reachable says whether a stream from one site reaches another; nil:
	// always.
	Reachable func(from, to chain.ClusterID) bool
	// NodeBytes is each node's pool size, and its free space, in its
	// reports; default 100 GiB.
	NodeBytes uint64
	// Shipping stamps a stream shipped at now; nil: it started and finished
	// at now.
	Shipping func(now time.Time) (started, finished time.Time)
	// Sends are every stream the nodes were asked to ship, in order.
	Sends []core.SendSpec

	mu    sync.Mutex // one step at a time
	guids int
}

// NewWorld is a world on a clock at Epoch with no sites yet.
func NewWorld() *World {
	return &World{Clock: NewClock(Epoch), Sites: map[chain.ClusterID]Site{}, NodeBytes: 100 << 30}
}

// AddSite adds a site and its paper nodes, named by the cluster's first
// letter ("a1", "a2"), and reports each once at address(name) so that the
// core places volumes on them.
func (w *World) AddSite(cluster chain.ClusterID, s Site, nodes int, address func(node string) string) error {
	w.Sites[cluster] = s
	w.Order = append(w.Order, cluster)
	letter := strings.ToLower(string(cluster[0]))
	for i := 1; i <= nodes; i++ {
		n := &Node{Cluster: cluster, Name: fmt.Sprintf("%s%d", letter, i), Datasets: map[string][]core.SnapshotInfo{}}
		w.Nodes = append(w.Nodes, n)
		if err := s.Report(core.NodeStatus{Node: n.Name, Address: address(n.Name), Usage: w.usage()}); err != nil {
			return err
		}
	}
	return nil
}

func (w *World) usage() backend.Usage {
	return backend.Usage{SizeBytes: w.NodeBytes, FreeBytes: w.NodeBytes}
}

func (w *World) reachable(from, to chain.ClusterID) bool {
	return w.Reachable == nil || w.Reachable(from, to)
}

// Run lets d pass in steps of one second (Step).
func (w *World) Run(d time.Duration) error {
	for elapsed := time.Duration(0); elapsed < d; elapsed += time.Second {
		if err := w.Step(); err != nil {
			return err
		}
	}
	return nil
}

// Step is one second of the world: every site ticks, every node applies
// its spec and reports, then the clock moves on.
func (w *World) Step() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.Order {
		if err := w.Sites[c].Tick(); err != nil {
			return err
		}
	}
	for _, n := range w.Nodes {
		if err := w.apply(n); err != nil {
			return err
		}
	}
	w.Clock.Advance(time.Second)
	return nil
}

// apply obeys the node's spec as the agent does -- create, snapshot, prune,
// destroy, ship -- and reports what it holds.
func (w *World) apply(n *Node) error {
	s := w.Sites[n.Cluster]
	spec, err := s.Spec(n.Name)
	if err != nil {
		return err
	}
	for _, v := range spec.Volumes {
		if _, ok := n.Datasets[v.Dataset]; !ok {
			if v.MustExist {
				return fmt.Errorf("%s: volume %s held here before is gone: the agent must not create it", n.Name, v.Dataset)
			}
			n.Datasets[v.Dataset] = nil // a fresh volume or a clone: no snapshots of its own
		}
		for _, name := range v.Snapshots {
			if !slices.ContainsFunc(n.Datasets[v.Dataset], func(s core.SnapshotInfo) bool { return s.Name == name }) {
				w.guids++
				n.Datasets[v.Dataset] = append(n.Datasets[v.Dataset], core.SnapshotInfo{Name: name, GUID: fmt.Sprintf("g%d", w.guids)})
			}
		}
		n.Datasets[v.Dataset] = slices.DeleteFunc(n.Datasets[v.Dataset], func(s core.SnapshotInfo) bool {
			return slices.Contains(v.Prune, s.Name)
		})
	}
	for _, d := range spec.Destroy {
		delete(n.Datasets, d)
	}
	for _, send := range spec.Sends {
		w.Sends = append(w.Sends, send)
		result, err := w.ship(n, send)
		if err != nil {
			return err
		}
		n.sent = append(n.sent, result)
	}
	status := core.NodeStatus{Node: n.Name, Usage: w.usage(), Sent: n.sent}
	for _, name := range slices.Sorted(maps.Keys(n.Datasets)) {
		status.Datasets = append(status.Datasets, core.DatasetStatus{Name: name, Snapshots: slices.Clone(n.Datasets[name])})
	}
	n.sent = nil
	return s.Report(status)
}

// ship delivers a stream to every receiver the way zfs recv takes it: only
// into a replica the target's spec holds open. As the node agent's, the send
// succeeds when one receiver took it (a receiver that missed it catches up
// through DRBD), and reports NoBase when every receiver lacked the base.
func (w *World) ship(from *Node, send core.SendSpec) (core.SendResult, error) {
	now := w.Clock.Now()
	started, finished := now, now
	if w.Shipping != nil {
		started, finished = w.Shipping(now)
	}
	result := core.SendResult{Dataset: send.Dataset, Snapshot: send.Snapshot, Target: send.Target,
		Bytes: 4096, Started: started, Finished: finished}
	if !w.reachable(from.Cluster, send.Target) {
		result.Error = "connection refused"
		return result, nil
	}
	var failures []string
	noBase := 0
	for _, r := range send.Receivers {
		to := w.Node(send.Target, r.Node)
		if to == nil {
			return result, fmt.Errorf("no node %s on %s", r.Node, send.Target)
		}
		spec, err := w.Sites[send.Target].Spec(to.Name)
		if err != nil {
			return result, err
		}
		if !slices.ContainsFunc(spec.Replicas, func(rs core.ReplicaSpec) bool { return rs.Dataset == send.TargetDataset && rs.Open }) {
			failures = append(failures, "replica closed")
			continue
		}
		if err := Receive(to, send); err != nil {
			failures = append(failures, err.Error())
			if strings.Contains(err.Error(), "does not match") {
				noBase++
			}
		}
	}
	if len(failures) == len(send.Receivers) && len(failures) > 0 {
		result.Error, result.NoBase = strings.Join(failures, "; "), noBase == len(send.Receivers)
	}
	return result, nil
}

// Receive takes a stream into n the way zfs recv does: a full stream only
// into a new dataset, a clone stream only onto a base it holds somewhere,
// an incremental one only onto its newest snapshot; a stream that arrived
// before is taken again without a change.
func Receive(n *Node, send core.SendSpec) error {
	snap := core.SnapshotInfo{Name: send.Snapshot, GUID: send.GUID}
	existing, exists := n.Datasets[send.TargetDataset]
	if exists && slices.Contains(existing, snap) {
		return nil
	}
	switch {
	case send.Base == "":
		if exists {
			return fmt.Errorf("destination %s exists", send.TargetDataset)
		}
		n.Datasets[send.TargetDataset] = []core.SnapshotInfo{snap}
	case strings.Contains(send.Base, "@"): // a clone stream: the base is found by GUID anywhere
		if exists {
			return fmt.Errorf("destination %s exists", send.TargetDataset)
		}
		if !n.Holds(send.BaseGUID) {
			return fmt.Errorf("most recent snapshot does not match incremental source")
		}
		n.Datasets[send.TargetDataset] = []core.SnapshotInfo{snap}
	default:
		if !exists || len(existing) == 0 || existing[len(existing)-1].GUID != send.BaseGUID {
			return fmt.Errorf("most recent snapshot of %s does not match incremental source", send.TargetDataset)
		}
		n.Datasets[send.TargetDataset] = append(existing, snap)
	}
	return nil
}

// Holds reports whether any dataset of n holds the snapshot.
func (n *Node) Holds(guid string) bool {
	for _, snaps := range n.Datasets {
		if slices.ContainsFunc(snaps, func(s core.SnapshotInfo) bool { return s.GUID == guid }) {
			return true
		}
	}
	return false
}

// Node finds a node by cluster and name; nil if there is none.
func (w *World) Node(c chain.ClusterID, name string) *Node {
	for _, n := range w.Nodes {
		if n.Cluster == c && n.Name == name {
			return n
		}
	}
	return nil
}
