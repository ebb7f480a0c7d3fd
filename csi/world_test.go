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
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
	"github.com/baton-dr/baton/storageapi"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

// This file is the world the driver's end-to-end tests run in: two sites'
// control planes (storage/core over memory stores) serving the real storage
// API over HTTPS, the paper node agents of storage/core/coretest obeying each
// node spec through that API, and a driver per site served over real gRPC
// on unix sockets. A partition cuts every connection between the sites, both
// ways; each site still reaches its own control plane.

const (
	clusterA = coretest.ClusterA
	clusterB = coretest.ClusterB
)

var ctx = context.Background()

type world struct {
	*coretest.World
	t           testing.TB
	ca          *storageapitest.CA
	sites       map[chain.ClusterID]*storageapi.Local
	servers     map[chain.ClusterID]*storageapitest.Server
	addresses   map[string]chain.ClusterID // API address -> cluster
	partitioned atomic.Bool
	// syncWait is what the drivers made from now on wait on a resync that
	// is not ready, or a promotion whose source's final sync has not
	// arrived (csi.SyncWait); the zero value answers at once.
	syncWait csi.SyncWait
	// deviceWait is how long the node services made from now on wait for
	// a device not there yet (csi.Node.DeviceWait); zero answers at once.
	deviceWait time.Duration
}

// apiSite is a site as its paper nodes reach it: through its storage API.
type apiSite struct{ *storageapi.Local }

func (s apiSite) Spec(node string) (core.NodeSpec, error) { return s.Local.Spec(ctx, node) }
func (s apiSite) Report(status core.NodeStatus) error     { return s.Local.Report(ctx, status) }

// siteMaker builds one site's control plane: its storage API over its core,
// reaching the other sites through peers.
type siteMaker func(w *world, id chain.ClusterID, peers storageapi.Peers) *storageapi.Local

// memorySite is a site whose core keeps its records in a core.MemoryStore.
func memorySite(w *world, id chain.ClusterID, peers storageapi.Peers) *storageapi.Local {
	s, err := core.New(core.Config{Cluster: id, Interval: time.Minute, Retention: 2, NewVolumeID: coretest.VolumeIDs(id)},
		core.NewMemoryStore(), peers, w.Clock)
	w.must(err)
	return storageapi.NewLocal(s)
}

func newWorld(t testing.TB) *world { return newWorldWith(t, nil) }

// newWorldWith builds the world with site A made by siteA (nil: in memory,
// as site B always is).
func newWorldWith(t testing.TB, siteA siteMaker) *world {
	t.Helper()
	ca, err := storageapitest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	w := &world{World: coretest.NewWorld(), t: t, ca: ca, sites: map[chain.ClusterID]*storageapi.Local{},
		servers: map[chain.ClusterID]*storageapitest.Server{}, addresses: map[string]chain.ClusterID{}}
	w.Clock = coretest.NewClock(time.Date(2026, 10, 2, 0, 0, 0, 0, time.UTC))
	w.Reachable = func(from, to chain.ClusterID) bool { return from == to || !w.partitioned.Load() }
	peers := map[chain.ClusterID]map[chain.ClusterID]storageapi.Cluster{}
	for _, id := range []chain.ClusterID{clusterA, clusterB} {
		peers[id] = map[chain.ClusterID]storageapi.Cluster{}
		makeSite := memorySite
		if id == clusterA && siteA != nil {
			makeSite = siteA
		}
		w.sites[id] = makeSite(w, id, storageapi.Peers{Clusters: peers[id]})
		server, err := storageapitest.Serve(ca, w.sites[id], "secret-"+string(id[:8]))
		w.must(err)
		t.Cleanup(server.Close)
		w.servers[id] = server
		w.addresses[strings.TrimPrefix(server.URL, "https://")] = id
		w.must(w.AddSite(id, apiSite{w.sites[id]}, 2, func(node string) string { return node }))
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
// The background ticker of the sanity test calls Step too, which returns its
// error instead of failing the test.
func (w *world) run(d time.Duration) {
	w.t.Helper()
	w.must(w.Run(d))
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
	services := csi.Assemble(csi.Assembly{Clusters: clusters, Controller: true, SyncWait: w.syncWait,
		Node: &csi.NodeAssembly{ID: nodeName, Site: "site-" + string(id[0]), Devices: devices, Mounter: mounter,
			DeviceWait: w.deviceWait}})
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
