package stream

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"time"
)

// The body follows the header as chunks, big-endian:
//
//	chunk  u32 length (1 to maxChunkBytes), then that many bytes
//	end    u32 0
//
// The end marker is what tells a complete body from a connection that broke
// off: a cut anywhere before it reads as an error, never as a short stream
// the pool might take for the whole. Chunking also lets a receiver that
// answered before reading everything (it held the snapshot already, or
// refused the stream) discard the rest frame by frame.
const (
	chunkPrefixBytes = 4
	maxChunkBytes    = 1 << 20
)

// bodyReader reads the chunks of one body as a plain byte stream, the one the
// agent's pool receives. It ends with io.EOF only after the end marker.
type bodyReader struct {
	r     io.Reader
	left  int // bytes of the current chunk not yet read
	ended bool
	err   error // sticky: io.EOF after the end marker, or the failure
	bytes uint64
	// counters, when set, see the bytes as they arrive.
	counters *Counters
}

func newBodyReader(r io.Reader) *bodyReader { return &bodyReader{r: r} }

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.left == 0 {
		if b.err = b.nextChunk(); b.err != nil {
			return 0, b.err
		}
	}
	n, err := b.r.Read(p[:min(len(p), b.left)])
	if n < 0 || n > b.left {
		panic("stream: a reader returned more bytes than asked for")
	}
	b.left -= n
	b.bytes += uint64(n)
	if b.counters != nil {
		b.counters.addBytes(n)
	}
	if err != nil && b.left > 0 {
		b.err = b.brokeOff(err)
		return n, b.err
	}
	return n, nil
}

// nextChunk reads a chunk's length; io.EOF at the end marker.
func (b *bodyReader) nextChunk() error {
	var prefix [chunkPrefixBytes]byte
	if _, err := io.ReadFull(b.r, prefix[:]); err != nil {
		return b.brokeOff(err)
	}
	n := binary.BigEndian.Uint32(prefix[:])
	switch {
	case n == 0:
		b.ended = true
		return io.EOF
	case n > maxChunkBytes:
		return fmt.Errorf("%w: a chunk of %d bytes exceeds %d", ErrProtocol, n, maxChunkBytes)
	}
	b.left = int(n)
	return nil
}

// brokeOff words a read that failed before the end marker; an orderly EOF
// there is a truncation too.
func (b *bodyReader) brokeOff(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: the body broke off after %d bytes: %w", ErrInterrupted, b.bytes, err)
}

// drain discards what is left of the body, at most limitBytes, so that the
// sender, which may still be writing when the answer goes out, is not reset
// before it reads the answer. It reports whether the end marker came.
func (b *bodyReader) drain(limitBytes int64) bool {
	io.CopyN(io.Discard, b, limitBytes)
	return b.ended
}

// deadlineReader gives each read of a connection a fresh deadline, so a peer
// that falls silent for longer than timeout fails the read instead of holding
// the stream (and the receiving agent) forever. A zero timeout leaves the
// connection's deadline as it is.
type deadlineReader struct {
	conn    net.Conn
	timeout time.Duration
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if d.timeout > 0 {
		if err := d.conn.SetReadDeadline(time.Now().Add(d.timeout)); err != nil {
			return 0, err
		}
	}
	return d.conn.Read(p)
}
