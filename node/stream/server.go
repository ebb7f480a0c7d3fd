package stream

import (
	"bufio"
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/baton-dr/baton/node/agent"
)

// Receiver takes in one stream: *agent.Agent in production, a double in
// tests. It may return before reading the stream (a refusal, a snapshot held
// already); the server then discards the rest of the body.
type Receiver interface {
	Receive(header agent.StreamHeader, stream io.Reader) error
}

// ServerOptions configure a Server. The zero durations and sizes take the
// defaults named.
type ServerOptions struct {
	// TLS carries the node's certificate; set ClientCAs and ClientAuth for
	// mutual TLS. The server never speaks below TLS 1.3.
	TLS      *tls.Config
	Receiver Receiver
	// MaxStreams bounds the streams received at once (default 4). A stream
	// beyond it is answered KindBusy at once; connections beyond twice it wait
	// to be accepted.
	MaxStreams int
	// HeaderTimeout bounds the handshake and the header (default 10 s).
	HeaderTimeout time.Duration
	// IdleTimeout bounds each wait for the sender mid-stream and each write of
	// the answer (default 1 min).
	IdleTimeout time.Duration
	// DrainBytes bounds what is discarded of a body the receiver did not read
	// (default 64 MiB): enough for what a sender has in flight when the answer
	// reaches it.
	DrainBytes int64
	// Logger gets one line per stream; nil discards. Tokens never reach it.
	Logger *slog.Logger
}

// Server accepts the streams other sites ship to this node and hands them to
// the node's agent. One connection carries one stream.
type Server struct {
	options   ServerOptions
	tlsConfig *tls.Config
	log       *slog.Logger
	counters  Counters
	streams   chan struct{} // a slot per stream being received
	conns     chan struct{} // a slot per connection open

	mu       sync.Mutex
	closed   bool
	done     chan struct{}
	listener net.Listener
	active   map[net.Conn]struct{}
	handlers sync.WaitGroup
}

const (
	defaultMaxStreams    = 4
	defaultHeaderTimeout = 10 * time.Second
	defaultIdleTimeout   = time.Minute
	defaultDrainBytes    = 64 << 20
	readBufferBytes      = 64 << 10
)

// NewServer checks the options and returns a server; Serve starts it.
func NewServer(options ServerOptions) (*Server, error) {
	if options.TLS == nil || (len(options.TLS.Certificates) == 0 && options.TLS.GetCertificate == nil &&
		options.TLS.GetConfigForClient == nil) {
		return nil, errors.New("stream: the server needs a TLS certificate")
	}
	if options.Receiver == nil {
		return nil, errors.New("stream: the server needs a receiver")
	}
	if options.MaxStreams < 0 || options.HeaderTimeout < 0 || options.IdleTimeout < 0 || options.DrainBytes < 0 {
		return nil, errors.New("stream: negative server limits")
	}
	options.MaxStreams = cmp.Or(options.MaxStreams, defaultMaxStreams)
	options.HeaderTimeout = cmp.Or(options.HeaderTimeout, defaultHeaderTimeout)
	options.IdleTimeout = cmp.Or(options.IdleTimeout, defaultIdleTimeout)
	options.DrainBytes = cmp.Or(options.DrainBytes, defaultDrainBytes)
	config := options.TLS.Clone()
	config.MinVersion = max(config.MinVersion, tls.VersionTLS13)
	log := options.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{
		options: options, tlsConfig: config, log: log,
		streams: make(chan struct{}, options.MaxStreams),
		conns:   make(chan struct{}, 2*options.MaxStreams),
		done:    make(chan struct{}),
		active:  map[net.Conn]struct{}{},
	}, nil
}

// Counters are the server's running totals.
func (s *Server) Counters() *Counters { return &s.counters }

// Serve accepts connections on l until Close, and returns nil then. It takes
// ownership of l.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed || s.listener != nil {
		s.mu.Unlock()
		l.Close()
		return errors.New("stream: Serve after Close, or twice")
	}
	s.listener = l
	s.mu.Unlock()
	backoff := time.Duration(0)
	for {
		select {
		case s.conns <- struct{}{}:
		case <-s.done:
			return nil
		}
		raw, err := l.Accept()
		if err != nil {
			<-s.conns
			if backoff = nextBackoff(backoff); !s.pause(backoff) {
				return nil
			}
			s.log.Warn("failed to accept a stream connection", "error", err)
			continue
		}
		backoff = 0
		if !s.track(raw) {
			raw.Close()
			<-s.conns
			return nil
		}
		go s.handle(raw)
	}
}

// nextBackoff paces retries of a failing Accept (too many open files, say)
// from 5 ms up to 1 s, as net/http does.
func nextBackoff(d time.Duration) time.Duration {
	return min(max(2*d, 5*time.Millisecond), time.Second)
}

// pause waits d, or reports false if the server closes first.
func (s *Server) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// Close stops accepting, cuts every connection (a stream cut off is received
// by nobody: the pool takes a stream whole or not at all), and waits for the
// handlers to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	l := s.listener
	for c := range s.active {
		c.Close()
	}
	s.mu.Unlock()
	var err error
	if l != nil {
		err = l.Close()
	}
	s.handlers.Wait()
	return err
}

// track registers a connection so that Close can cut it; false once closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active[c] = struct{}{}
	s.handlers.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	c.Close()
	s.mu.Lock()
	delete(s.active, c)
	s.mu.Unlock()
	<-s.conns
	s.handlers.Done()
}

// handle serves one connection: handshake, header, the agent's verdict on the
// body, the answer, and the discarding of what the agent did not read.
func (s *Server) handle(raw net.Conn) {
	defer s.untrack(raw)
	remote := raw.RemoteAddr().String()
	raw.SetDeadline(time.Now().Add(s.options.HeaderTimeout))
	conn := tls.Server(raw, s.tlsConfig)
	if err := conn.Handshake(); err != nil {
		s.log.Info("stream connection failed its TLS handshake", "remote", remote, "error", err)
		return
	}
	in := &deadlineReader{conn: conn} // no timeout of its own until the header is in
	buffered := bufio.NewReaderSize(in, readBufferBytes)
	header, err := readHeader(buffered)
	if err != nil {
		s.log.Warn("refused a stream with a bad header", "remote", remote, "error", err)
		s.writeAnswer(conn, answer{kind: KindInvalid, message: err.Error()})
		// The framing is unknown (another version, say): discard bytes, not chunks.
		io.CopyN(io.Discard, buffered, s.options.DrainBytes)
		return
	}
	raw.SetDeadline(time.Time{})
	in.timeout = s.options.IdleTimeout
	body := newBodyReader(buffered)
	body.counters = &s.counters
	verdict, answered := s.receive(header, body, remote)
	if !answered {
		return
	}
	s.writeAnswer(conn, verdict)
	if body.err == nil {
		body.drain(s.options.DrainBytes)
	}
}

// receive hands the body to the receiver, if a stream slot is free.
func (s *Server) receive(header agent.StreamHeader, body *bodyReader, remote string) (answer, bool) {
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		s.counters.finish(s.counters.begin(), 0, KindBusy, true)
		s.log.Info("refused a stream: at capacity", streamAttrs(header, remote, "streams", s.options.MaxStreams)...)
		return answer{kind: KindBusy, message: fmt.Sprintf("%v: the node takes %d streams at once", ErrBusy, s.options.MaxStreams)}, true
	}
	started := s.counters.begin()
	err := s.options.Receiver.Receive(header, body)
	verdict := answer{kind: classify(err)}
	if err != nil {
		verdict.message = redact(err.Error(), header.Token)
	}
	broken := errors.Is(body.err, ErrInterrupted)
	s.counters.finish(started, body.bytes, verdict.kind, !broken)
	attrs := streamAttrs(header, remote, "bytes", body.bytes, "duration", time.Since(started), "answer", verdict.kind.String())
	switch {
	case broken:
		s.log.Warn("a stream broke off; its pool took nothing of it", append(attrs, "error", redact(body.err.Error(), header.Token))...)
		return verdict, false // nobody is left to answer
	case err != nil:
		s.log.Warn("refused a stream", append(attrs, "error", verdict.message)...)
	default:
		s.log.Info("received a stream", attrs...)
	}
	return verdict, true
}

// writeAnswer sends the verdict; a sender gone by now learns nothing, and
// retries.
func (s *Server) writeAnswer(conn *tls.Conn, a answer) {
	conn.SetWriteDeadline(time.Now().Add(s.options.IdleTimeout))
	if _, err := conn.Write(encodeAnswer(a)); err != nil {
		s.log.Info("failed to answer a stream", "remote", conn.RemoteAddr().String(), "error", err)
	}
}

// streamAttrs names a stream for the log: every field of the header but the
// token, which never goes to a log.
func streamAttrs(h agent.StreamHeader, remote string, more ...any) []any {
	return append([]any{"source", string(h.Source), "dataset", h.Dataset, "snapshot", h.Snapshot,
		"guid", h.GUID, "remote", remote}, more...)
}

// redact removes the token from a message that leaves the receiving agent,
// should any layer below ever quote it.
func redact(message, token string) string {
	if token == "" {
		return message
	}
	return strings.ReplaceAll(message, token, "[redacted]")
}
