package storageapi_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
	"github.com/baton-dr/baton/storageapi/storageapitest"
)

// TestAfterAPartitionHealsTheFirstCallsHaveTheirFullTimeout: a partition
// that drops packets (nftables' drop, as the real bed cuts) leaves the TCP
// connection open on both ends and stalled after the heal, until the
// sender's retransmission timer fires -- on the real bed, for about a
// minute, during which every call went onto it (HTTP/2 multiplexes them) and
// failed at the brief timeout. The client pings a connection it has read
// nothing from for a call timeout and closes it when the ping goes
// unanswered, so once the partition heals the transport dials anew, and a
// call whose handshake the cluster answers has its full timeout: an answer
// slower than the brief timeout (site B's Resync asks site A in turn what it
// holds) is not failed by it.
func TestAfterAPartitionHealsTheFirstCallsHaveTheirFullTimeout(t *testing.T) {
	p := newPair(t)
	slow, err := storageapitest.Serve(p.ca, slowCluster{Cluster: p.locals[clusterA], by: 600 * time.Millisecond}, "s")
	must(t, err)
	t.Cleanup(slow.Close)
	hole := newBlackHole(t)
	client, err := storageapi.NewClient(storageapi.ClientConfig{ID: clusterA, Endpoint: slow.URL, Secret: "s",
		TLS: p.ca.ClientTLS(), CallTimeout: 1500 * time.Millisecond, BriefTimeout: 200 * time.Millisecond, Dial: hole.dial})
	must(t, err)
	root := chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-000000000001"}
	if _, err := client.Volume(ctx, root); errors.Is(err, chain.ErrUnreachable) {
		t.Fatalf("before the cut: %v", err)
	}
	hole.cut(true)
	for range 2 { // the stalled connection's full timeout, then a brief dial into the cut
		if _, err := client.Volume(ctx, root); !errors.Is(err, chain.ErrUnreachable) {
			t.Fatalf("during the cut: %v, want ErrUnreachable", err)
		}
	}
	hole.closed(t, 10*time.Second)
	hole.cut(false)
	if _, err := client.Volume(ctx, root); errors.Is(err, chain.ErrUnreachable) {
		t.Fatalf("after the heal, an answer slower than the brief timeout: %v, want it", err)
	}
}

// slowCluster answers Volume after a while (a peer call of its own, a
// loaded API server).
type slowCluster struct {
	storageapi.Cluster
	by time.Duration
}

func (s slowCluster) Carry(ctx context.Context, op storageapi.Operation, request any) (any, error) {
	if op.Name(request) == "Volume" {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.by):
		}
	}
	return s.Cluster.Carry(ctx, op, request)
}

// blackHole is a test double of a partition that drops packets: while it
// cuts, no connection can be made, and every connection open at the cut
// stalls for good -- what it is sent vanishes, nothing arrives -- which is
// how an open TCP connection behaves until its retransmission timer fires.
type blackHole struct {
	ended   chan struct{}
	mu      sync.Mutex
	cutting bool
	open    []*stallableConn
}

func newBlackHole(t *testing.T) *blackHole {
	h := &blackHole{ended: make(chan struct{})}
	t.Cleanup(func() { close(h.ended) })
	return h
}

func (h *blackHole) dial(ctx context.Context, network, address string) (net.Conn, error) {
	h.mu.Lock()
	if h.cutting {
		// The SYN is dropped, and so is every retransmission until the
		// test ends: the kernel's connect waits for one (1, 3, 7, 15, 31 s
		// after the first) that comes after the heal.
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.ended:
			return nil, errors.New("the test ended")
		}
	}
	defer h.mu.Unlock()
	conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	c := newStallableConn(conn)
	h.open = append(h.open, c)
	return c, nil
}

func (h *blackHole) cut(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cutting = on
	if on {
		for _, c := range h.open {
			c.stall()
		}
	}
}

// closed waits until the client has closed every connection the cut
// stalled, for at most limit.
func (h *blackHole) closed(t *testing.T, limit time.Duration) {
	t.Helper()
	h.mu.Lock()
	open := append([]*stallableConn(nil), h.open...)
	h.mu.Unlock()
	deadline := time.After(limit)
	for _, c := range open {
		if !c.isStalled() {
			continue
		}
		select {
		case <-c.closed:
		case <-deadline:
			t.Fatalf("a connection the cut stalled is still open after %s: the client never gave it up", limit)
		}
	}
}

type stallableConn struct {
	net.Conn
	stallOnce, closeOnce sync.Once
	stalled, closed      chan struct{}
}

func newStallableConn(conn net.Conn) *stallableConn {
	return &stallableConn{Conn: conn, stalled: make(chan struct{}), closed: make(chan struct{})}
}

func (c *stallableConn) stall() { c.stallOnce.Do(func() { close(c.stalled) }) }

func (c *stallableConn) isStalled() bool {
	select {
	case <-c.stalled:
		return true
	default:
		return false
	}
}

// Read returns what the peer sent until the cut; from then on nothing, until
// the connection is closed.
func (c *stallableConn) Read(b []byte) (int, error) {
	if !c.isStalled() {
		n, err := c.Conn.Read(b)
		if !c.isStalled() {
			return n, err
		}
	}
	<-c.closed
	return 0, net.ErrClosed
}

// Write sends until the cut; after it, what is written vanishes.
func (c *stallableConn) Write(b []byte) (int, error) {
	if c.isStalled() {
		return len(b), nil
	}
	return c.Conn.Write(b)
}

func (c *stallableConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
