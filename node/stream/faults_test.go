package stream

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/syncio"
	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// pausing stops the receiving agent's reading once it has read afterBytes of
// a stream, tells the test, and goes on when the test says so.
type pausing struct {
	inner      Receiver
	afterBytes int
	midway     chan struct{}
	resume     chan struct{}
}

func (p *pausing) Receive(h agent.StreamHeader, r io.Reader) error {
	read, paused := 0, false
	return p.inner.Receive(h, readerFunc(func(b []byte) (int, error) {
		if !paused && read >= p.afterBytes {
			paused = true
			close(p.midway)
			<-p.resume
		}
		n, err := r.Read(b)
		read += n
		return n, err
	}))
}

// The receiving node dies in the middle of a stream: its pool keeps nothing
// of it, the sender reports the interruption, and once the node is back the
// agent's next attempt at the same snapshot lands it whole.
func TestAServerKilledMidStreamLeavesNothingAndTheRetrySucceeds(t *testing.T) {
	p := &pausing{afterBytes: 1 << 20, midway: make(chan struct{}), resume: make(chan struct{})}
	s := newSites(t, func(r Receiver) Receiver { p.inner = r; return p })
	data := pattern(4<<20, 5)
	s.write(0, data)
	guid := s.snapshot("baton-000001")
	spec := s.sendSpec("rep-1", "baton-000001", "", token)

	s.reconcileA([]core.SendSpec{spec})
	<-p.midway
	killed := make(chan error, 1)
	go func() { killed <- s.server.Close() }()
	cut := <-s.shipped // the sender learns of the cut while the receiver is still paused
	close(p.resume)
	if err := <-killed; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(cut.err, ErrInterrupted) {
		t.Fatalf("the sender got %v, want ErrInterrupted", cut.err)
	}
	if st := s.reconcileA(nil); len(st.Sent) != 1 || st.Sent[0].Error == "" {
		t.Fatalf("the agent reports %+v, want the send failed", st.Sent)
	}
	if _, err := s.poolB.Volume("rep-1"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("B's pool kept part of a cut stream: %v", err)
	}

	// The node restarts on its address, its agent serving again.
	s.server, _ = serve(t, s.cert, s.b, s.serverOptions(), s.address)
	retry, result := s.send(spec)
	if retry.err != nil || result.Error != "" {
		t.Fatalf("the retry: %v (agent: %q)", retry.err, result.Error)
	}
	snaps, err := s.poolB.Snapshots("rep-1")
	if err != nil || len(snaps) != 1 || snaps[0].GUID != guid || !bytes.Equal(pooltest.Read(t, s.poolB, "rep-1", 0, len(data)), data) {
		t.Fatalf("after the retry rep-1 holds %+v (%v), want the snapshot %s and A's bytes", snaps, err, guid)
	}
}

// recording tells the test what the receiving agent decided.
type recording struct {
	inner   Receiver
	results chan error
}

func (r *recording) Receive(h agent.StreamHeader, stream io.Reader) error {
	err := r.inner.Receive(h, stream)
	r.results <- err
	return err
}

// failingStream yields its data, then fails as a dying `zfs send` would.
type failingStream struct {
	data []byte
	err  error
}

func (f *failingStream) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func (f *failingStream) Close() error { return nil }

// The sender's own stream breaks off: the receiver sees a truncated stream
// and takes nothing, the sender reports its source's failure.
func TestASenderWhoseStreamBreaksLeavesNothingOnTheReceiver(t *testing.T) {
	rec := &recording{results: make(chan error, 4)}
	s := newSites(t, func(r Receiver) Receiver { rec.inner = r; return rec })
	s.write(0, pattern(4<<20, 6))
	s.snapshot("baton-000001")
	whole, err := s.poolA.Send("vol-1", "", "baton-000001")
	if err != nil {
		t.Fatal(err)
	}
	encoded, _ := io.ReadAll(whole)
	dying := errors.New("zfs send: signal: killed")
	to := core.Receiver{Node: "b-n1", Address: s.address, Token: token}
	header := agent.StreamHeader{Source: clusterA, Dataset: "rep-1", Snapshot: "baton-000001", GUID: s.guid("baton-000001"), Token: token}

	got := ship(t, s.client, to, header, &failingStream{data: encoded[:len(encoded)/2], err: dying})
	if !errors.Is(got.err, dying) || got.bytes == 0 || got.bytes > uint64(len(encoded)/2) {
		t.Fatalf("the sender got %d bytes, %v; want its source's failure", got.bytes, got.err)
	}
	if err := <-rec.results; !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("the receiving pool said %v, want ErrInvalid for a truncated stream", err)
	}
	if _, err := s.poolB.Volume("rep-1"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("B's pool kept part of a broken stream: %v", err)
	}
	if got := ship(t, s.client, to, header, io.NopCloser(bytes.NewReader(encoded))); got.err != nil || <-rec.results != nil {
		t.Fatalf("the stream sent again: %v", got.err)
	}
}

func TestAnUnreachableReceiverIsErrUnreachable(t *testing.T) {
	ca := newAuthority(t, "ca")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := l.Addr().String()
	l.Close() // nobody listens there now: connection refused
	client := newClient(t, ca, ClientOptions{})
	got := ship(t, client, core.Receiver{Node: "b-n1", Address: address, Token: token}, sampleHeader(),
		io.NopCloser(strings.NewReader("stream")))
	if !errors.Is(got.err, chain.ErrUnreachable) || got.bytes != 0 {
		t.Fatalf("got %d bytes, %v; want ErrUnreachable", got.bytes, got.err)
	}
	if strings.Contains(got.err.Error(), sampleHeader().Token) {
		t.Fatalf("the error quotes the token: %v", got.err)
	}
	if st := client.Counters().Stats(); st.TransportErrors != 1 || st.InFlight != 0 {
		t.Fatalf("counters %+v", st)
	}
}

// discard is a receiving agent that takes any stream and reads it through.
type discard struct {
	mu    sync.Mutex
	calls int
}

func (d *discard) Receive(_ agent.StreamHeader, r io.Reader) error {
	d.mu.Lock()
	d.calls++
	d.mu.Unlock()
	_, err := io.Copy(io.Discard, r)
	return err
}

func (d *discard) called() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

// The sender trusts only a receiver whose certificate its CAs signed for the
// address it dials; the stream, token and all, never reaches another.
func TestTheReceiverMustProveItsIdentity(t *testing.T) {
	trusted, other := newAuthority(t, "trusted"), newAuthority(t, "other")
	tests := []struct {
		name string
		cert tls.Certificate
	}{
		{"certificate from another CA", other.issue(t, "b-n1", loopback)},
		{"certificate for another address", trusted.issue(t, "b-n1", net.ParseIP("10.0.0.9"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			receiver := &discard{}
			_, address := serve(t, tt.cert, receiver, ServerOptions{}, "")
			client := newClient(t, trusted, ClientOptions{})
			got := ship(t, client, core.Receiver{Node: "b-n1", Address: address, Token: token}, sampleHeader(),
				io.NopCloser(strings.NewReader("stream")))
			var verification *tls.CertificateVerificationError
			if !errors.Is(got.err, ErrHandshake) || !errors.As(got.err, &verification) || got.bytes != 0 {
				t.Fatalf("got %d bytes, %v; want ErrHandshake with the verification error", got.bytes, got.err)
			}
			if receiver.called() != 0 {
				t.Fatal("an unverified receiver was handed the stream")
			}
		})
	}
	// The same client reaches a receiver with a certificate it trusts.
	receiver := &discard{}
	_, address := serve(t, trusted.issue(t, "b-n1", loopback), receiver, ServerOptions{}, "")
	client := newClient(t, trusted, ClientOptions{})
	if got := ship(t, client, core.Receiver{Node: "b-n1", Address: address}, sampleHeader(),
		io.NopCloser(strings.NewReader("stream"))); got.err != nil || receiver.called() != 1 {
		t.Fatalf("a trusted receiver: %v", got.err)
	}
}

// endless is a stream that never ends: a sender finishes it only by
// listening to the receiver.
type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }
func (endless) Close() error               { return nil }

// answering is a receiving agent that answers without reading the stream.
type answering struct{ err error }

func (a answering) Receive(agent.StreamHeader, io.Reader) error { return a.err }

// A receiver that answers before reading (it holds the snapshot, or refuses
// it) ends the stream: the sender stops writing and reports the answer.
func TestAnEarlyAnswerEndsTheStream(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"held already", nil, nil},
		{"refused", fmt.Errorf("%w: stream for rep-1 presents the wrong token", agent.ErrUnauthorized), agent.ErrUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca := newAuthority(t, "ca")
			_, address := serve(t, ca.issue(t, "b-n1", loopback), answering{tt.err}, ServerOptions{}, "")
			client := newClient(t, ca, ClientOptions{})
			got := ship(t, client, core.Receiver{Node: "b-n1", Address: address}, sampleHeader(), endless{})
			if (tt.want == nil) != (got.err == nil) || (tt.want != nil && !errors.Is(got.err, tt.want)) {
				t.Fatalf("got %v, want %v", got.err, tt.want)
			}
			// Had the sender not listened, it would have written until the
			// receiver stopped discarding and cut the connection.
			if got.bytes >= defaultDrainBytes {
				t.Fatalf("the sender wrote %d bytes after the answer", got.bytes)
			}
		})
	}
}

// blocking is a receiving agent that holds each stream until released.
type blocking struct {
	entered chan struct{}
	release chan struct{}
}

func (b *blocking) Receive(_ agent.StreamHeader, r io.Reader) error {
	b.entered <- struct{}{}
	<-b.release
	_, err := io.Copy(io.Discard, r)
	return err
}

func TestStreamsBeyondTheBoundAreAnsweredBusy(t *testing.T) {
	ca := newAuthority(t, "ca")
	receiver := &blocking{entered: make(chan struct{}, 1), release: make(chan struct{})}
	server, address := serve(t, ca.issue(t, "b-n1", loopback), receiver, ServerOptions{MaxStreams: 1}, "")
	client := newClient(t, ca, ClientOptions{})
	to := core.Receiver{Node: "b-n1", Address: address}
	first := newDone(t, client)
	client.Ship(to, sampleHeader(), io.NopCloser(strings.NewReader("first")), first.done)
	<-receiver.entered
	if got := ship(t, client, to, sampleHeader(), io.NopCloser(strings.NewReader("second"))); !errors.Is(got.err, ErrBusy) {
		t.Fatalf("a stream beyond the bound: %v, want ErrBusy", got.err)
	}
	close(receiver.release)
	if got := first.wait(); got.err != nil {
		t.Fatalf("the stream within the bound: %v", got.err)
	}
	if st := server.Counters().Stats(); st.Answers[KindOK] != 1 || st.Answers[KindBusy] != 1 || st.Streams != 2 {
		t.Fatalf("server counters %+v", st)
	}
}

// dialRaw opens a TLS connection to a server the way a client would, for
// tests that speak the protocol by hand.
func dialRaw(t *testing.T, ca *authority, address string) *tls.Conn {
	t.Helper()
	conn, err := tls.Dial("tcp", address, &tls.Config{RootCAs: ca.pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// A peer that falls silent is cut off: before its header, and in the middle
// of its body, where the receiving agent sees the stream break.
func TestASilentPeerIsCutOff(t *testing.T) {
	ca := newAuthority(t, "ca")
	rec := &recording{inner: &discard{}, results: make(chan error, 1)}
	// The header timeout leaves the handshake room on a loaded machine.
	options := ServerOptions{HeaderTimeout: 500 * time.Millisecond, IdleTimeout: 100 * time.Millisecond}
	_, address := serve(t, ca.issue(t, "b-n1", loopback), rec, options, "")

	silent := dialRaw(t, ca, address)
	if _, err := io.ReadAll(silent); err != nil {
		t.Fatalf("a silent client: %v, want the server to close", err)
	}

	stalled := dialRaw(t, ca, address)
	frame, _ := encodeHeader(sampleHeader())
	stalled.Write(append(frame, chunked([]byte("the first chunk"), 1024, false)...))
	err := <-rec.results
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the agent of a stalled stream read %v, want ErrInterrupted past the deadline", err)
	}
}

func TestABadHeaderIsAnsweredInvalid(t *testing.T) {
	ca := newAuthority(t, "ca")
	receiver := &discard{}
	_, address := serve(t, ca.issue(t, "b-n1", loopback), receiver, ServerOptions{}, "")
	conn := dialRaw(t, ca, address)
	frame, _ := encodeHeader(sampleHeader())
	frame[8] = protocolVersion + 1
	conn.Write(append(frame, "a body in a framing from the future"...))
	conn.CloseWrite()
	got, err := readAnswer(conn)
	if err != nil || got.kind != KindInvalid || !strings.Contains(got.message, "protocol version") {
		t.Fatalf("answer %+v, %v; want invalid naming the version", got, err)
	}
	if receiver.called() != 0 {
		t.Fatal("a stream with a bad header reached the agent")
	}
}

// Should any layer below the receiver quote the token, it leaves neither in
// the answer nor in the log.
func TestTheTokenNeverLeavesTheReceiver(t *testing.T) {
	ca := newAuthority(t, "ca")
	logs := &syncio.Buffer{}
	quoting := answering{err: fmt.Errorf("%w: bad token %q", agent.ErrUnauthorized, token)}
	options := (&sites{logs: logs}).serverOptions()
	server, address := serve(t, ca.issue(t, "b-n1", loopback), quoting, options, "")
	client := newClient(t, ca, ClientOptions{})
	h := sampleHeader()
	h.Token = token
	got := ship(t, client, core.Receiver{Node: "b-n1", Address: address, Token: token}, h, io.NopCloser(strings.NewReader("x")))
	server.Close()
	if !errors.Is(got.err, agent.ErrUnauthorized) || strings.Contains(got.err.Error(), token) || !strings.Contains(got.err.Error(), "[redacted]") {
		t.Fatalf("the sender got %v", got.err)
	}
	if strings.Contains(logs.String(), token) || !strings.Contains(logs.String(), "rep-1") {
		t.Fatalf("the log:\n%s", logs)
	}
}

// Closing the client cuts its streams in flight; each reports ErrClosed, and
// a stream shipped after is refused at once.
func TestClosingTheClientEndsItsStreams(t *testing.T) {
	ca := newAuthority(t, "ca")
	receiver := &blocking{entered: make(chan struct{}, 1), release: make(chan struct{})}
	_, address := serve(t, ca.issue(t, "b-n1", loopback), receiver, ServerOptions{}, "")
	defer close(receiver.release)
	client := newClient(t, ca, ClientOptions{})
	to := core.Receiver{Node: "b-n1", Address: address}
	inFlight := newDone(t, client)
	client.Ship(to, sampleHeader(), endless{}, inFlight.done)
	<-receiver.entered
	client.Close()
	if got := inFlight.wait(); !errors.Is(got.err, ErrClosed) {
		t.Fatalf("a stream in flight at Close: %v, want ErrClosed", got.err)
	}
	if got := ship(t, client, to, sampleHeader(), endless{}); !errors.Is(got.err, ErrClosed) {
		t.Fatalf("a stream after Close: %v, want ErrClosed", got.err)
	}
}
