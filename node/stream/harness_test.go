package stream

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/syncio"
	"github.com/baton-dr/baton/node/agent"
	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// serve starts a server for receiver on 127.0.0.1: on a free port, or on
// address when given (a restarted node keeps its address). Cleanup closes it.
func serve(t testing.TB, cert tls.Certificate, receiver Receiver, options ServerOptions, address string) (*Server, string) {
	t.Helper()
	if address == "" {
		address = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	options.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	options.Receiver = receiver
	server, err := NewServer(options)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- server.Serve(l) }()
	t.Cleanup(func() {
		server.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return server, l.Addr().String()
}

func newClient(t testing.TB, ca *authority, options ClientOptions) *Client {
	t.Helper()
	options.RootCAs = ca.pool
	client, err := NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

type outcome struct {
	bytes uint64
	err   error
}

// doneOnce is a done callback that checks, once the client is closed and no
// stream can still be running, that it was called exactly once.
type doneOnce struct {
	calls    atomic.Int32
	outcomes chan outcome
}

func newDone(t testing.TB, client *Client) *doneOnce {
	d := &doneOnce{outcomes: make(chan outcome, 2)}
	t.Cleanup(func() {
		client.Close() // waits for every Ship's goroutine
		if n := d.calls.Load(); n != 1 {
			t.Errorf("done was called %d times, want once", n)
		}
	})
	return d
}

func (d *doneOnce) done(bytes uint64, err error) {
	d.calls.Add(1)
	d.outcomes <- outcome{bytes, err}
}

func (d *doneOnce) wait() outcome { return <-d.outcomes }

// ship sends one stream with the client and waits for its outcome.
func ship(t testing.TB, client *Client, to core.Receiver, h agent.StreamHeader, stream io.ReadCloser) outcome {
	t.Helper()
	d := newDone(t, client)
	client.Ship(to, h, stream, d.done)
	return d.wait()
}

// observed is the sending agent's transport: the client, with every done
// checked for being called once and its outcome published to the test.
type observed struct {
	t        *testing.T
	client   *Client
	outcomes chan outcome
}

func (o *observed) Ship(to core.Receiver, h agent.StreamHeader, stream io.ReadCloser, done func(uint64, error)) {
	d := newDone(o.t, o.client)
	o.client.Ship(to, h, stream, func(bytes uint64, err error) {
		done(bytes, err)
		d.done(bytes, err)
		o.outcomes <- outcome{bytes, err}
	})
}

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

const (
	clusterA chain.ClusterID = "aaaaaaaa-0000-4000-8000-00000000000a"
	clusterB chain.ClusterID = "bbbbbbbb-0000-4000-8000-00000000000b"
	token                    = "replica-token-6f1c2a9e0d7b4c35"
)

// sites is site A's node shipping vol-1 to the replica rep-1 on site B's
// node over TLS on loopback: two agents, two simulated pools, a server and a
// client.
type sites struct {
	t        *testing.T
	ca       *authority
	poolA    *simzfs.Pool
	poolB    *simzfs.Pool
	a, b     *agent.Agent
	cert     tls.Certificate
	address  string
	server   *Server
	client   *Client
	shipped  chan outcome
	volume   core.VolumeSpec
	replicas []core.ReplicaSpec
	logs     *syncio.Buffer
}

// newSites builds both sites; wrap, when set, stands between the server and
// B's agent.
func newSites(t *testing.T, wrap func(Receiver) Receiver) *sites {
	s := &sites{t: t, ca: newAuthority(t, "baton streams"), shipped: make(chan outcome, 16), logs: &syncio.Buffer{},
		poolA: simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1}),
		poolB: simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 2})}
	s.client = newClient(t, s.ca, ClientOptions{ChunkBytes: 64 << 10})
	s.a = newAgent(t, "a-n1", clusterA, s.poolA, &observed{t: t, client: s.client, outcomes: s.shipped})
	s.b = newAgent(t, "b-n1", clusterB, s.poolB, &observed{t: t, client: s.client, outcomes: make(chan outcome, 16)})
	s.cert = s.ca.issue(t, "b-n1", loopback)
	var receiver Receiver = s.b
	if wrap != nil {
		receiver = wrap(s.b)
	}
	s.server, s.address = serve(t, s.cert, receiver, s.serverOptions(), "")
	s.openReplica("rep-1")
	s.volume = core.VolumeSpec{Dataset: "vol-1", SizeBytes: 64 << 20, Up: true, Role: backend.Primary}
	s.reconcileA(nil)
	return s
}

func (s *sites) serverOptions() ServerOptions {
	return ServerOptions{Logger: slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

func newAgent(t *testing.T, node string, cluster chain.ClusterID, pool backend.Pool, transport agent.Transport) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Options{Node: node, Cluster: cluster, Pool: pool, Transport: transport,
		Clock: &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (s *sites) openReplica(dataset string) {
	source := chain.Ref{Cluster: clusterA, Volume: "00000000-0000-4000-8000-000000000001"}
	s.replicas = append(s.replicas, core.ReplicaSpec{Dataset: dataset, Source: source, Open: true, Token: token})
	s.reconcileB()
}

func (s *sites) closeReplicas() {
	for i := range s.replicas {
		s.replicas[i].Open = false
	}
	s.reconcileB()
}

func (s *sites) reconcileB() {
	if st := s.b.Reconcile(core.NodeSpec{Node: "b-n1", Replicas: s.replicas}); len(st.Errors) > 0 {
		s.t.Fatal(st.Errors)
	}
}

func (s *sites) reconcileA(sends []core.SendSpec) core.NodeStatus {
	st := s.a.Reconcile(core.NodeSpec{Node: "a-n1", Volumes: []core.VolumeSpec{s.volume}, Sends: sends})
	if len(st.Errors) > 0 {
		s.t.Fatal(st.Errors)
	}
	return st
}

// write puts data on vol-1 at offset, synced.
func (s *sites) write(offset int64, data []byte) {
	pooltest.Write(s.t, s.poolA, "vol-1", offset, data)
}

// snapshot takes a snapshot of vol-1 and returns its GUID.
func (s *sites) snapshot(name string) string {
	s.volume.Snapshots = append(s.volume.Snapshots, name)
	s.reconcileA(nil)
	snaps, err := s.poolA.Snapshots("vol-1")
	if err != nil {
		s.t.Fatal(err)
	}
	for _, snap := range snaps {
		if snap.Name == name {
			return snap.GUID
		}
	}
	s.t.Fatalf("no snapshot %s on vol-1", name)
	return ""
}

func (s *sites) sendSpec(dataset, snapshot, base, presented string) core.SendSpec {
	return core.SendSpec{Dataset: "vol-1", Snapshot: snapshot, GUID: s.guid(snapshot), Base: base, Target: clusterB,
		TargetDataset: dataset, Receivers: []core.Receiver{{Node: "b-n1", Address: s.address, Token: presented}}}
}

func (s *sites) guid(snapshot string) string {
	snaps, _ := s.poolA.Snapshots("vol-1")
	for _, snap := range snaps {
		if snap.Name == snapshot {
			return snap.GUID
		}
	}
	return ""
}

// send has A's agent ship a snapshot as its pairing would, waits for the
// transport's outcome, and returns it with the result the agent reports.
func (s *sites) send(spec core.SendSpec) (outcome, core.SendResult) {
	// The stream may finish before the first pass reports (the transport runs
	// on its own goroutine): its result is in whichever report came after.
	first := s.reconcileA([]core.SendSpec{spec})
	got := <-s.shipped
	second := s.reconcileA(nil)
	sent := append(first.Sent, second.Sent...)
	if len(sent) != 1 {
		s.t.Fatalf("the agent reports %d finished sends, want 1", len(sent))
	}
	return got, sent[0]
}

// pattern is n bytes that differ from block to block.
func pattern(n int, seed byte) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(i/7) ^ seed
	}
	return out
}
