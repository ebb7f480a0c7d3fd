package stream

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// ClientOptions configure a Client. The zero durations and sizes take the
// defaults named.
type ClientOptions struct {
	// RootCAs sign the receivers' certificates; required (the system pool
	// is never trusted for streams).
	RootCAs *x509.CertPool
	// Certificates are presented to receivers that ask (mutual TLS).
	Certificates []tls.Certificate
	// ServerName is the name a receiver's certificate must carry; nil takes
	// the host of its Address.
	ServerName func(core.Receiver) string
	// DialTimeout bounds the connection and the handshake (default 10 s).
	DialTimeout time.Duration
	// IdleTimeout bounds each write of the stream (default 1 min).
	IdleTimeout time.Duration
	// AnswerTimeout bounds the wait for the receiver's answer once the whole
	// stream is written (default 5 min: the receive commits at its end).
	AnswerTimeout time.Duration
	// ChunkBytes is the size of the body's chunks (default 256 KiB, at most
	// 1 MiB).
	ChunkBytes int
}

// Client ships streams to other sites' node agents over TLS: the agent's
// Transport in production.
type Client struct {
	options   ClientOptions
	tlsConfig *tls.Config
	counters  Counters
	ctx       context.Context // cancelled by Close: cuts every stream in flight
	cancel    context.CancelFunc

	mu       sync.Mutex
	closed   bool
	shipping sync.WaitGroup
}

var _ agent.Transport = (*Client)(nil)

const (
	defaultDialTimeout   = 10 * time.Second
	defaultAnswerTimeout = 5 * time.Minute
	defaultChunkBytes    = 256 << 10
	// answerGrace is how long a sender whose write failed still listens: a
	// receiver that refused the stream answers, then may cut the connection.
	answerGrace = 5 * time.Second
)

// NewClient checks the options and returns a client.
func NewClient(options ClientOptions) (*Client, error) {
	if options.RootCAs == nil {
		return nil, errors.New("stream: the client needs the CAs of the receivers' certificates")
	}
	if options.DialTimeout < 0 || options.IdleTimeout < 0 || options.AnswerTimeout < 0 ||
		options.ChunkBytes < 0 || options.ChunkBytes > maxChunkBytes {
		return nil, fmt.Errorf("stream: client limits out of range (chunks of 1 to %d bytes)", maxChunkBytes)
	}
	options.DialTimeout = cmp.Or(options.DialTimeout, defaultDialTimeout)
	options.IdleTimeout = cmp.Or(options.IdleTimeout, defaultIdleTimeout)
	options.AnswerTimeout = cmp.Or(options.AnswerTimeout, defaultAnswerTimeout)
	options.ChunkBytes = cmp.Or(options.ChunkBytes, defaultChunkBytes)
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{
		options: options,
		tlsConfig: &tls.Config{RootCAs: options.RootCAs, Certificates: options.Certificates,
			MinVersion: tls.VersionTLS13},
		ctx: ctx, cancel: cancel,
	}, nil
}

// Counters are the client's running totals.
func (c *Client) Counters() *Counters { return &c.counters }

// Close cuts the streams in flight (each reports ErrClosed) and waits until
// every done has been called. Ship after Close reports ErrClosed at once.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.shipping.Wait()
	return nil
}

// Ship sends one stream on its own goroutine and calls done once, from that
// goroutine, with the body bytes written and the outcome; the stream is closed
// before done. After Close, done is called before Ship returns.
func (c *Client) Ship(receiver core.Receiver, header agent.StreamHeader, stream io.ReadCloser,
	done func(bytes uint64, err error)) {
	if stream == nil || done == nil {
		panic("stream: Ship without a stream or a done")
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		stream.Close()
		done(0, ErrClosed)
		return
	}
	c.shipping.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.shipping.Done()
		started := c.counters.begin()
		bytes, verdict, err := c.ship(receiver, header, stream)
		stream.Close()
		c.counters.finish(started, bytes, verdict.kind, err == nil)
		if err == nil {
			err = verdict.err()
		}
		done(bytes, err)
	}()
}

// ship runs one stream: the verdict when the receiver answered, an error
// when it could not.
func (c *Client) ship(receiver core.Receiver, header agent.StreamHeader, stream io.Reader) (uint64, answer, error) {
	bytes, verdict, err := c.try(receiver, header, stream)
	if err != nil && c.ctx.Err() != nil {
		err = fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if err != nil {
		err = fmt.Errorf("stream %s@%s to %s at %s: %w", header.Dataset, header.Snapshot, receiver.Node, receiver.Address, err)
	}
	return bytes, verdict, err
}

func (c *Client) try(receiver core.Receiver, header agent.StreamHeader, stream io.Reader) (uint64, answer, error) {
	frame, err := encodeHeader(header)
	if err != nil {
		return 0, answer{}, fmt.Errorf("the header is not sendable: %w", err)
	}
	conn, err := c.connect(receiver)
	if err != nil {
		return 0, answer{}, err
	}
	defer conn.Close()
	stop := context.AfterFunc(c.ctx, func() { conn.Close() })
	defer stop()
	return c.exchange(conn, frame, stream)
}

// connect dials the receiver and verifies its certificate.
func (c *Client) connect(receiver core.Receiver) (*tls.Conn, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.options.DialTimeout)
	defer cancel()
	var dialer net.Dialer
	raw, err := dialer.DialContext(ctx, "tcp", receiver.Address)
	if err != nil {
		return nil, fmt.Errorf("failed to connect: %w: %w", chain.ErrUnreachable, err)
	}
	config := c.tlsConfig.Clone()
	config.ServerName = c.serverName(receiver)
	conn := tls.Client(raw, config)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	return conn, nil
}

func (c *Client) serverName(receiver core.Receiver) string {
	if c.options.ServerName != nil {
		return c.options.ServerName(receiver)
	}
	host, _, err := net.SplitHostPort(receiver.Address)
	if err != nil {
		return receiver.Address
	}
	return host
}

// heard is what the answer reader heard: an answer, or why none came.
type heard struct {
	answer answer
	err    error
}

// exchange writes the header and the body while another goroutine listens
// for the answer, which may come before the body is through: the receiver
// held the snapshot already, or refused the stream.
func (c *Client) exchange(conn *tls.Conn, frame []byte, stream io.Reader) (uint64, answer, error) {
	answers := make(chan heard, 1)
	go func() {
		a, err := readAnswer(conn)
		answers <- heard{answer: a, err: err}
	}()
	bytes, early, err := c.send(conn, frame, stream, answers)
	var h heard
	switch {
	case early != nil:
		h = *early
	case errors.Is(err, errSource):
		conn.Close() // the receiver must see the stream break off, not wait for more
		<-answers
		return bytes, answer{}, err
	case err != nil:
		conn.SetReadDeadline(time.Now().Add(answerGrace))
		h = <-answers
	default:
		conn.SetReadDeadline(time.Now().Add(c.options.AnswerTimeout))
		h = <-answers
	}
	switch {
	case h.err == nil:
		return bytes, h.answer, nil
	case err != nil:
		return bytes, answer{}, err
	}
	return bytes, answer{}, fmt.Errorf("%w: no answer after %d bytes: %w", ErrInterrupted, bytes, h.err)
}

// errSource marks a failure to read the stream being sent (the sender's own
// `zfs send` broke), as opposed to a failure of the connection.
var errSource = errors.New("failed to read the stream to send")

// send writes the header, the chunks and the end marker. It stops early when
// the answer comes first, and returns what was heard then.
func (c *Client) send(conn *tls.Conn, frame []byte, stream io.Reader, answers <-chan heard) (uint64, *heard, error) {
	out := &deadlineWriter{conn: conn, timeout: c.options.IdleTimeout}
	if _, err := out.Write(frame); err != nil {
		return 0, nil, fmt.Errorf("%w: failed to write the header: %w", ErrInterrupted, err)
	}
	chunk := make([]byte, chunkPrefixBytes+c.options.ChunkBytes)
	var bytes uint64
	for { // bounded by the stream's length, or by an answer
		select {
		case h := <-answers:
			if h.err == nil {
				return bytes, &h, nil
			}
			return bytes, &h, fmt.Errorf("%w: the connection broke after %d bytes: %w", ErrInterrupted, bytes, h.err)
		default:
		}
		n, err := io.ReadFull(stream, chunk[chunkPrefixBytes:])
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return bytes, nil, fmt.Errorf("%w after %d bytes: %w", errSource, bytes, err)
		}
		if n > 0 {
			binary.BigEndian.PutUint32(chunk, uint32(n))
			if _, err := out.Write(chunk[:chunkPrefixBytes+n]); err != nil {
				return bytes, nil, fmt.Errorf("%w: the connection broke after %d bytes: %w", ErrInterrupted, bytes, err)
			}
			bytes += uint64(n)
			c.counters.addBytes(n)
		}
		if err != nil { // the stream's end
			var end [chunkPrefixBytes]byte
			if _, err := out.Write(end[:]); err != nil {
				return bytes, nil, fmt.Errorf("%w: failed to end the stream after %d bytes: %w", ErrInterrupted, bytes, err)
			}
			return bytes, nil, nil
		}
	}
}

// deadlineWriter gives each write a fresh deadline, so a receiver that stops
// reading without answering fails the stream instead of holding it.
type deadlineWriter struct {
	conn    net.Conn
	timeout time.Duration
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if err := d.conn.SetWriteDeadline(time.Now().Add(d.timeout)); err != nil {
		return 0, err
	}
	return d.conn.Write(p)
}
