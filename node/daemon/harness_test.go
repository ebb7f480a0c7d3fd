package daemon_test

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/baton-dr/baton/internal/syncio"
	"github.com/baton-dr/baton/node/btrfs"
	"github.com/baton-dr/baton/node/daemon"
	"github.com/baton-dr/baton/node/leftovers"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
	"github.com/baton-dr/baton/storageapi"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

const (
	clusterA = coretest.ClusterA
	clusterB = coretest.ClusterB
	// poolBytes is each node's sparse pool image.
	poolBytes = 1 << 30
	mib       = 1 << 20
	// waitLimit bounds every wait for the nodes to converge: a bound, not a
	// figure any test asserts.
	waitLimit = 2 * time.Minute
)

// needRoot skips tests that attach loop devices and mount btrfs where they
// cannot; CI runs as root, so there they run.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the node agent attaches loop devices and mounts btrfs (CI runs as root)")
	}
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// world is the sites of a test, their storage APIs over HTTPS, and the node
// agents' passes, which waits wake on.
type world struct {
	t      *testing.T
	ca     *storageapitest.CA
	sites  []*testSite
	passes chan struct{}
}

func newWorld(t *testing.T, ids ...chain.ClusterID) *world {
	t.Helper()
	needRoot(t)
	ca, err := storageapitest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, ca: ca, passes: make(chan struct{}, 1)}
	for _, id := range ids {
		w.sites = append(w.sites, newTestSite(t, ca, id))
	}
	// Every site reaches every other through its HTTPS API. The maps are
	// filled before any call can read them.
	for _, s := range w.sites {
		for _, peer := range w.sites {
			if peer != s {
				s.peers[peer.id] = peer.client
			}
		}
	}
	return w
}

func (w *world) site(id chain.ClusterID) *testSite {
	i := slices.IndexFunc(w.sites, func(s *testSite) bool { return s.id == id })
	return w.sites[i]
}

// eventually ticks the sites' control planes and checks cond after every
// pass of any node, until it holds or waitLimit passes.
func (w *world) eventually(what string, cond func() error, nodes ...*testNode) {
	w.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		for _, s := range w.sites {
			if err := s.local.Tick(); err != nil {
				w.t.Fatalf("tick of %s: %v", s.id, err)
			}
		}
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-w.passes:
		case <-deadline.C:
			var last []string
			for _, n := range nodes {
				last = append(last, n.lastTrouble())
			}
			w.t.Fatalf("%s: still %v after %s; the nodes' last troubles: %v", what, err, waitLimit, last)
		}
	}
}

// testSite is one site's control plane behind its storage API over HTTPS.
type testSite struct {
	id     chain.ClusterID
	mu     sync.Mutex // the API's lock: records are read under it
	site   *core.Site
	store  *core.MemoryStore
	local  *storageapi.Local
	server *storageapitest.Server
	client *storageapi.Client
	peers  map[chain.ClusterID]storageapi.Cluster
}

func newTestSite(t testing.TB, ca *storageapitest.CA, id chain.ClusterID) *testSite {
	t.Helper()
	ts := &testSite{id: id, store: core.NewMemoryStore(), peers: map[chain.ClusterID]storageapi.Cluster{}}
	s, err := core.New(core.Config{Cluster: id, Interval: time.Hour,
		NewVolumeID:  coretest.VolumeIDs(id),
		ReplicaToken: func(source chain.Ref) string { return "token-of-" + source.String() },
	}, ts.store, storageapi.Peers{Clusters: ts.peers, CallTimeout: 10 * time.Second}, wallClock{})
	if err != nil {
		t.Fatal(err)
	}
	ts.site = s
	ts.local = storageapi.NewLocalWith(func(context.Context) (*core.Site, func(), error) {
		ts.mu.Lock()
		return s, ts.mu.Unlock, nil
	}, s.Cluster)
	if ts.server, err = storageapitest.Serve(ca, ts.local, "secret-of-"+string(id[:8])); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ts.server.Close)
	if ts.client, err = ts.server.Client(ca); err != nil {
		t.Fatal(err)
	}
	return ts
}

// volume reads a volume's record.
func (ts *testSite) volume(ref chain.Ref) (core.Volume, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.site.Volume(ref)
}

// node reads a node's record.
func (ts *testSite) node(name string) (core.Node, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	nodes, _ := ts.store.Nodes()
	i := slices.IndexFunc(nodes, func(n core.Node) bool { return n.Name == name })
	if i < 0 {
		return core.Node{}, false
	}
	return nodes[i], true
}

// replica reads the replica of source.
func (ts *testSite) replica(source chain.Ref) (core.Replica, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	replicas, _ := ts.store.Replicas()
	i := slices.IndexFunc(replicas, func(r core.Replica) bool { return r.Source == source })
	if i < 0 {
		return core.Replica{}, false
	}
	return replicas[i], true
}

// pairing reads the pairing of source.
func (ts *testSite) pairing(source chain.Ref) (core.Pairing, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	p, found, _ := ts.site.Pairing(source)
	return p, found
}

// testNode is one node agent, run in-process through node/daemon as
// cmd/baton-node runs it, with a btrfs pool on a loop device.
type testNode struct {
	name      string
	daemon    *daemon.Daemon
	pool      *btrfs.Pool
	poolDir   string
	deviceDir string
	registry  *prometheus.Registry
	logs      *syncio.Buffer

	mu      sync.Mutex
	trouble string // the last pass's error or problems, for failure messages
	stopped bool
	cancel  context.CancelFunc
	done    chan error
}

// startNode runs node n1's agent of site s over the pool in poolDir
// (created when empty, adopted otherwise). The test's end stops it and
// checks that it left no loop device and no mount behind.
func (w *world) startNode(s *testSite, name, poolDir string) *testNode {
	w.t.Helper()
	t := w.t
	pool, err := btrfs.New(btrfs.Options{Dir: poolDir, SizeBytes: poolBytes})
	if err != nil {
		t.Fatalf("the pool in %s: %v", poolDir, err)
	}
	cert, err := w.ca.ServerCertificate()
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &testNode{name: name, pool: pool, poolDir: poolDir, deviceDir: filepath.Join(poolDir, "devices"),
		registry: prometheus.NewRegistry(), logs: &syncio.Buffer{}, done: make(chan error, 1)}
	n.daemon, err = daemon.New(daemon.Config{Node: name, Cluster: s.id, Address: listener.Addr().String(),
		API: s.client, Pool: pool, PeerRoots: w.ca.Pool, StreamListener: listener,
		StreamTLS: &tls.Config{Certificates: []tls.Certificate{cert}}, DeviceDir: n.deviceDir,
		Interval: 50 * time.Millisecond, Registry: n.registry,
		Log: slog.New(slog.NewTextHandler(n.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		AfterPass: func(r daemon.PassResult) {
			n.note(r)
			select {
			case w.passes <- struct{}{}:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() { n.done <- n.daemon.Run(ctx) }()
	t.Cleanup(func() {
		if err := n.stop(); err != nil {
			t.Errorf("stopping %s: %v", name, err)
		}
		assertNothingLeft(t, poolDir)
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, n.logs)
		}
	})
	return n
}

func (n *testNode) note(r daemon.PassResult) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case r.Err != nil:
		n.trouble = r.Err.Error()
	case len(r.Problems) > 0:
		n.trouble = strings.Join(r.Problems, "; ")
	default:
		n.trouble = ""
	}
}

func (n *testNode) lastTrouble() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.name + ": " + n.trouble
}

// stop ends the daemon as SIGTERM does and returns Run's outcome; stopping
// twice returns nil.
func (n *testNode) stop() error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return nil
	}
	n.stopped = true
	n.mu.Unlock()
	n.cancel()
	return <-n.done
}

// link resolves a dataset's device link.
func (n *testNode) link(dataset string) (string, error) {
	return filepath.EvalSymlinks(filepath.Join(n.deviceDir, dataset))
}

// assertNothingLeft fails the test if a loop device shows a file under dir
// or anything is mounted under it.
func assertNothingLeft(t testing.TB, dir string) {
	t.Helper()
	if loops := loopsUnder(t, dir); len(loops) > 0 {
		t.Errorf("loop devices left attached under %s: %v", dir, loops)
	}
	if mounts := mountsUnder(t, dir); len(mounts) > 0 {
		t.Errorf("mounts left under %s: %v", dir, mounts)
	}
}

// loopsUnder lists the loop devices whose backing file is under dir (other
// tests on the machine attach their own).
func loopsUnder(t testing.TB, dir string) []string {
	t.Helper()
	loops, err := leftovers.Loops(context.Background(), dir)
	if err != nil {
		t.Fatalf("losetup: %v", err)
	}
	return loops
}

// mountsUnder lists the mount points under dir in /proc/mounts.
func mountsUnder(t testing.TB, dir string) []string {
	t.Helper()
	mounts, err := leftovers.Mounts(dir)
	if err != nil {
		t.Fatal(err)
	}
	return mounts
}

// tempDir is a test directory with symbolic links resolved (losetup and
// /proc/mounts show resolved paths).
func tempDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeDevice writes data at offset through a block device and syncs it, as
// an application writes to the volume the CSI node plugin staged.
func writeDevice(t testing.TB, path string, offset int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, offset); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// readDevice reads n bytes at offset from a block device.
func readDevice(t testing.TB, path string, offset int64, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, offset); err != nil {
		t.Fatal(err)
	}
	return buf
}
