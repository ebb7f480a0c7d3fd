package csi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/identity"
	"github.com/csi-addons/spec/lib/go/replication"
	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

// This file is the world the driver's end-to-end tests run in: two sites'
// control planes (storage/core over memory stores) serving the real storage
// API over HTTPS, "paper" node agents that obey each node spec the way the
// real agent does (names of datasets and snapshots only, ZFS's receive rules
// included), and a driver per site served over real gRPC on unix sockets.
// A partition cuts every connection between the sites, both ways; each site
// still reaches its own control plane.

const (
	clusterA chain.ClusterID = "aaaaaaaa-0000-4000-8000-00000000000a"
	clusterB chain.ClusterID = "bbbbbbbb-0000-4000-8000-00000000000b"
)

var ctx = context.Background()

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type world struct {
	t           testing.TB
	ca          *storageapitest.CA
	clock       *clock
	sites       map[chain.ClusterID]*storageapi.Local
	servers     map[chain.ClusterID]*storageapitest.Server
	addresses   map[string]chain.ClusterID // API address -> cluster
	partitioned atomic.Bool
	stepMu      sync.Mutex // one step at a time: the sanity test ticks in the background
	nodeBytes   uint64
	nodes       []*paperNode
	guids       int
}

type paperNode struct {
	cluster  chain.ClusterID
	name     string
	datasets map[string][]core.SnapshotInfo
	sent     []core.SendResult
}

func newWorld(t testing.TB) *world {
	t.Helper()
	ca, err := storageapitest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, ca: ca, clock: &clock{now: time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC)},
		sites: map[chain.ClusterID]*storageapi.Local{}, servers: map[chain.ClusterID]*storageapitest.Server{},
		addresses: map[string]chain.ClusterID{}, nodeBytes: 100 << 30}
	peers := map[chain.ClusterID]map[chain.ClusterID]storageapi.Cluster{}
	for _, id := range []chain.ClusterID{clusterA, clusterB} {
		peers[id] = map[chain.ClusterID]storageapi.Cluster{}
		s, err := core.New(core.Config{Cluster: id, Interval: time.Minute, Retention: 2, NewVolumeID: w.newID(id)},
			core.NewMemoryStore(), storageapi.Peers{Clusters: peers[id]}, w.clock)
		w.must(err)
		w.sites[id] = storageapi.NewLocal(s)
		server, err := storageapitest.Serve(ca, w.sites[id], "secret-"+string(id[:8]))
		w.must(err)
		t.Cleanup(server.Close)
		w.servers[id] = server
		w.addresses[strings.TrimPrefix(server.URL, "https://")] = id
		letter := strings.ToLower(string(id[0]))
		for i := 1; i <= 2; i++ {
			n := &paperNode{cluster: id, name: fmt.Sprintf("%s%d", letter, i), datasets: map[string][]core.SnapshotInfo{}}
			w.nodes = append(w.nodes, n)
			w.must(w.sites[id].Report(ctx, core.NodeStatus{Node: n.name, Address: n.name, Usage: backend.Usage{SizeBytes: w.nodeBytes, FreeBytes: w.nodeBytes}}))
		}
	}
	for from, m := range peers {
		for _, to := range []chain.ClusterID{clusterA, clusterB} {
			if to != from {
				m[to] = w.client(from, to)
			}
		}
	}
	return w
}

func (w *world) newID(id chain.ClusterID) func() chain.VolumeID {
	next := 0 // called under the site's mutex
	return func() chain.VolumeID {
		next++
		return chain.VolumeID(fmt.Sprintf("%s-0000-4000-8000-%012d", id[:8], next))
	}
}

func (w *world) must(err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
}

// client is cluster to's storage API as site from reaches it.
func (w *world) client(from, to chain.ClusterID) *storageapi.Client {
	c, err := storageapi.NewClient(storageapi.ClientConfig{ID: to, Endpoint: w.servers[to].URL, Secret: w.servers[to].Secret,
		TLS: w.ca.ClientTLS(), CallTimeout: 5 * time.Second, Dial: w.dialFrom(from)})
	w.must(err)
	return c
}

// dialFrom dials on behalf of site from: connections to the other site fail
// while the sites are partitioned, also those opened before.
func (w *world) dialFrom(from chain.ClusterID) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		open := func() bool { return w.addresses[address] == from || !w.partitioned.Load() }
		if !open() {
			return nil, fmt.Errorf("dial %s: partitioned from %s", address, from[:8])
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return gatedConn{Conn: conn, open: open}, nil
	}
}

type gatedConn struct {
	net.Conn
	open func() bool
}

var errPartitioned = errors.New("partitioned")

func (c gatedConn) Read(b []byte) (int, error) {
	if !c.open() {
		_ = c.Conn.Close()
		return 0, errPartitioned
	}
	return c.Conn.Read(b)
}

func (c gatedConn) Write(b []byte) (int, error) {
	if !c.open() {
		_ = c.Conn.Close()
		return 0, errPartitioned
	}
	return c.Conn.Write(b)
}

// api is a cluster's storage API, called directly (the test's own view).
func (w *world) api(id chain.ClusterID) *storageapi.Local { return w.sites[id] }

// secret renders a clusters document; local names the clusters marked local.
func (w *world) secret(local ...chain.ClusterID) map[string]string {
	var c storageapi.Clusters
	for _, id := range []chain.ClusterID{clusterA, clusterB} {
		c.Entries = append(c.Entries, w.servers[id].Entry(slices.Contains(local, id)))
	}
	data, err := json.Marshal(c)
	w.must(err)
	return map[string]string{storageapi.SecretKey: string(data)}
}

// run lets d pass in steps of one second: both sites tick, every node applies
// its spec and reports. A partitioned site keeps ticking; its streams fail.
func (w *world) run(d time.Duration) {
	w.t.Helper()
	for elapsed := time.Duration(0); elapsed < d; elapsed += time.Second {
		w.must(w.step())
	}
}

// step is one second of the world; the background ticker of the sanity test
// calls it too, so it returns its error instead of failing the test.
func (w *world) step() error {
	w.stepMu.Lock()
	defer w.stepMu.Unlock()
	for _, id := range []chain.ClusterID{clusterA, clusterB} {
		if err := w.sites[id].Tick(); err != nil {
			return err
		}
	}
	for _, n := range w.nodes {
		if err := w.apply(n); err != nil {
			return err
		}
	}
	w.clock.advance(time.Second)
	return nil
}

func (w *world) apply(n *paperNode) error {
	s := w.sites[n.cluster]
	spec, err := s.Spec(ctx, n.name)
	if err != nil {
		return err
	}
	for _, v := range spec.Volumes {
		if _, ok := n.datasets[v.Dataset]; !ok {
			if v.MustExist {
				return fmt.Errorf("%s: volume %s held here before is gone", n.name, v.Dataset)
			}
			n.datasets[v.Dataset] = nil
		}
		for _, name := range v.Snapshots {
			if !slices.ContainsFunc(n.datasets[v.Dataset], func(s core.SnapshotInfo) bool { return s.Name == name }) {
				w.guids++
				n.datasets[v.Dataset] = append(n.datasets[v.Dataset], core.SnapshotInfo{Name: name, GUID: fmt.Sprintf("g%d", w.guids)})
			}
		}
		n.datasets[v.Dataset] = slices.DeleteFunc(n.datasets[v.Dataset], func(s core.SnapshotInfo) bool { return slices.Contains(v.Prune, s.Name) })
	}
	for _, d := range spec.Destroy {
		delete(n.datasets, d)
	}
	for _, send := range spec.Sends {
		result, err := w.ship(n, send)
		if err != nil {
			return err
		}
		n.sent = append(n.sent, result)
	}
	status := core.NodeStatus{Node: n.name, Usage: backend.Usage{SizeBytes: w.nodeBytes, FreeBytes: w.nodeBytes}, Sent: n.sent}
	names := make([]string, 0, len(n.datasets))
	for name := range n.datasets {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		status.Datasets = append(status.Datasets, core.DatasetStatus{Name: name, Snapshots: slices.Clone(n.datasets[name])})
	}
	n.sent = nil
	return s.Report(ctx, status)
}

// ship delivers a stream to every receiver the way zfs recv takes it.
func (w *world) ship(from *paperNode, send core.SendSpec) (core.SendResult, error) {
	result := core.SendResult{Dataset: send.Dataset, Snapshot: send.Snapshot, Target: send.Target,
		Bytes: 4096, Started: w.clock.Now(), Finished: w.clock.Now()}
	if w.partitioned.Load() {
		result.Error = "connection refused"
		return result, nil
	}
	for _, r := range send.Receivers {
		to := w.node(send.Target, r.Node)
		if to == nil {
			return result, fmt.Errorf("no node %s on %s", r.Node, send.Target)
		}
		spec, err := w.sites[send.Target].Spec(ctx, to.name)
		if err != nil {
			return result, err
		}
		if !slices.ContainsFunc(spec.Replicas, func(rs core.ReplicaSpec) bool { return rs.Dataset == send.TargetDataset && rs.Open }) {
			result.Error = "replica closed"
			return result, nil
		}
		if err := receive(to, send); err != nil {
			result.Error, result.NoBase = err.Error(), strings.Contains(err.Error(), "does not match")
			return result, nil
		}
	}
	return result, nil
}

func receive(n *paperNode, send core.SendSpec) error {
	snap := core.SnapshotInfo{Name: send.Snapshot, GUID: send.GUID}
	existing, exists := n.datasets[send.TargetDataset]
	if exists && slices.Contains(existing, snap) {
		return nil
	}
	switch {
	case send.Base == "":
		if exists {
			return fmt.Errorf("destination %s exists", send.TargetDataset)
		}
		n.datasets[send.TargetDataset] = []core.SnapshotInfo{snap}
	case strings.Contains(send.Base, "@"):
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
	return nil
}

// driver is one site's CSI driver, reached over gRPC on unix sockets.
type driver struct {
	site        chain.ClusterID
	secrets     map[string]string
	identity    csiapi.IdentityClient
	controller  csiapi.ControllerClient
	node        csiapi.NodeClient
	replication replication.ControllerClient
	addons      identity.IdentityClient
	mounter     *fakeMounter
	csiSocket   string
	services    csi.Services
}

// newDriver serves site's driver as node nodeName; secrets are what its
// requests carry (the clusters document as that site's operator writes it).
func (w *world) newDriver(id chain.ClusterID, nodeName string, secrets map[string]string) *driver {
	w.t.Helper()
	mounter := newFakeMounter()
	d := w.newDriverWith(id, nodeName, secrets, fakeDevices{}, mounter)
	d.mounter = mounter
	return d
}

// newDriverWith is newDriver with the node's devices and mounter given.
func (w *world) newDriverWith(id chain.ClusterID, nodeName string, secrets map[string]string, devices csi.Devices, mounter csi.Mounter) *driver {
	w.t.Helper()
	clusters := &csi.Clusters{Dialer: &csi.HTTPDialer{TLS: w.ca.ClientTLS(), CallTimeout: 5 * time.Second, DialConn: w.dialFrom(id)}}
	services := csi.Assemble(csi.Assembly{Clusters: clusters, Controller: true,
		Node: &csi.NodeAssembly{ID: nodeName, Site: "site-" + string(id[0]), Devices: devices, Mounter: mounter}})
	csiConn, csiSocket := w.serve(csi.NewCSIServer(services, logr.Discard()))
	addonsConn, _ := w.serve(csi.NewAddonsServer(services, logr.Discard()))
	return &driver{site: id, secrets: secrets, csiSocket: csiSocket, services: services,
		identity: csiapi.NewIdentityClient(csiConn), controller: csiapi.NewControllerClient(csiConn), node: csiapi.NewNodeClient(csiConn),
		replication: replication.NewControllerClient(addonsConn), addons: identity.NewIdentityClient(addonsConn)}
}

// serve runs server on a fresh unix socket and dials it.
func (w *world) serve(server *grpc.Server) (*grpc.ClientConn, string) {
	w.t.Helper()
	dir, err := os.MkdirTemp("", "csi")
	w.must(err)
	socket := filepath.Join(dir, "csi.sock")
	listener, err := csi.ListenUnix("unix://" + socket)
	w.must(err)
	go func() { _ = server.Serve(listener) }()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	w.must(err)
	w.t.Cleanup(func() {
		_ = conn.Close()
		server.Stop()
		_ = os.RemoveAll(dir)
	})
	return conn, socket
}

// fakeDevices names each member's device by its dataset.
type fakeDevices struct{}

func (fakeDevices) Device(_ context.Context, v core.Volume) (string, error) {
	return "/dev/fake/" + v.Dataset(), nil
}

// fakeMounter keeps filesystems and mounts in memory.
type fakeMounter struct {
	mu          sync.Mutex
	filesystems map[string]string // device -> type
	mounts      map[string]string // path -> device
}

func newFakeMounter() *fakeMounter {
	return &fakeMounter{filesystems: map[string]string{}, mounts: map[string]string{}}
}

func (m *fakeMounter) Filesystem(_ context.Context, device string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.filesystems[device], nil
}

func (m *fakeMounter) Format(_ context.Context, device, fsType string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.filesystems[device] = fsType
	return nil
}

func (m *fakeMounter) Mount(_ context.Context, device, target, _ string, _ []string, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts[target] = device
	return nil
}

func (m *fakeMounter) BindMount(_ context.Context, source, target string, _ bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if device, ok := m.mounts[source]; ok {
		source = device
	}
	m.mounts[target] = source
	return nil
}

func (m *fakeMounter) Unmount(_ context.Context, target string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mounts, target)
	return nil
}

func (m *fakeMounter) Mounted(_ context.Context, path string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.mounts[path]
	return ok, nil
}

func (m *fakeMounter) device(path string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mounts[path]
}

func (m *fakeMounter) Resize(context.Context, string, string, string) error { return nil }
func (m *fakeMounter) Stats(context.Context, string) (csi.VolumeStats, error) {
	return csi.VolumeStats{TotalBytes: 1 << 30, AvailableBytes: 1 << 29, UsedBytes: 1 << 29}, nil
}
func (m *fakeMounter) MakeDir(string) error  { return nil }
func (m *fakeMounter) MakeFile(string) error { return nil }
func (m *fakeMounter) Remove(string) error   { return nil }
