package zfs

import (
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc64"
	"io"
)

// The stream encoding, little-endian throughout:
//
//	header   56 bytes: magic "BATONZFS", version u32, flags u32, block size u32,
//	         name length u32, volume size u64, base GUID u64 (0 for a full
//	         stream), snapshot GUID u64, block count u64
//	name     the snapshot's name
//	records  block count times: block index u64, then block size bytes of data,
//	         in increasing index order
//	trailer  CRC-64 (ECMA) of every byte before it
const (
	streamMagic        = "BATONZFS"
	streamVersion      = 1
	streamHeaderBytes  = 56
	recordHeaderBytes  = 8
	streamTrailerBytes = 8
	// flagClone marks a stream whose base is a snapshot of another volume, the
	// origin of the sent clone (zfs's DRR_FLAG_CLONE).
	flagClone  = 1
	knownFlags = flagClone
)

var crcTable = crc64.MakeTable(crc64.ECMA)

// streamHeader is what a stream says about itself before its blocks.
type streamHeader struct {
	blockSizeBytes  uint64
	volumeSizeBytes uint64
	baseGUID        uint64 // 0: a full stream
	snapshotGUID    uint64
	snapshot        string
	clone           bool
	blockCount      uint64
}

func (h streamHeader) incremental() bool { return h.baseGUID != 0 }

// encodedBytes is the exact length of a stream with this header.
func (h streamHeader) encodedBytes() uint64 {
	return streamHeaderBytes + uint64(len(h.snapshot)) +
		h.blockCount*(recordHeaderBytes+h.blockSizeBytes) + streamTrailerBytes
}

func (h streamHeader) encode() []byte {
	buf := make([]byte, streamHeaderBytes, streamHeaderBytes+len(h.snapshot))
	copy(buf, streamMagic)
	var flags uint32
	if h.clone {
		flags |= flagClone
	}
	le := binary.LittleEndian
	le.PutUint32(buf[8:], streamVersion)
	le.PutUint32(buf[12:], flags)
	le.PutUint32(buf[16:], uint32(h.blockSizeBytes))
	le.PutUint32(buf[20:], uint32(len(h.snapshot)))
	le.PutUint64(buf[24:], h.volumeSizeBytes)
	le.PutUint64(buf[32:], h.baseGUID)
	le.PutUint64(buf[40:], h.snapshotGUID)
	le.PutUint64(buf[48:], h.blockCount)
	return append(buf, h.snapshot...)
}

// record is one block of a stream. Its data is immutable: a sent block's
// bytes are shared with the sender's tree, not copied.
type record struct {
	index uint64
	data  []byte
}

// Stream is a simulated `zfs send` stream. It reads as its byte encoding, so
// any io.Reader can carry it; Receive takes an unread *Stream directly.
type Stream struct {
	header  streamHeader
	records []record

	// The encoder's position: the chunk being copied out and what follows.
	started bool
	chunk   []byte
	next    int // the record whose index goes out next; len(records): trailer
	data    bool
	ended   bool
	crc     hash.Hash64
	closed  bool
}

func newStream(header streamHeader, records []record) *Stream {
	if header.blockCount != uint64(len(records)) {
		panic("zfs: a stream header that miscounts its records")
	}
	return &Stream{header: header, records: records, crc: crc64.New(crcTable)}
}

// Len is the stream's encoded size in bytes, what shipping it costs.
func (s *Stream) Len() uint64 { return s.header.encodedBytes() }

// BlockCount is the number of blocks the stream carries.
func (s *Stream) BlockCount() int { return len(s.records) }

var errStreamClosed = errors.New("zfs: read from a closed stream")

// Read copies out the stream's encoding.
func (s *Stream) Read(buf []byte) (int, error) {
	if s.closed {
		return 0, errStreamClosed
	}
	n := 0
	for n < len(buf) {
		if len(s.chunk) == 0 && !s.advance() {
			break
		}
		copied := copy(buf[n:], s.chunk)
		s.chunk = s.chunk[copied:]
		n += copied
	}
	if n == 0 && len(buf) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// advance loads the next chunk of the encoding and feeds it to the checksum;
// it reports false once the trailer is out.
func (s *Stream) advance() bool {
	switch {
	case !s.started:
		s.started = true
		s.chunk = s.header.encode()
	case s.ended:
		return false
	case s.next == len(s.records):
		s.ended = true
		s.chunk = binary.LittleEndian.AppendUint64(nil, s.crc.Sum64())
		return true // the trailer is not part of its own checksum
	case s.data:
		s.chunk = s.records[s.next].data
		s.data = false
		s.next++
	default:
		s.chunk = binary.LittleEndian.AppendUint64(nil, s.records[s.next].index)
		s.data = true
	}
	s.crc.Write(s.chunk)
	return true
}

// unread reports whether nothing of the stream was read yet.
func (s *Stream) unread() bool { return !s.started && !s.closed }

// consume marks the stream read through, as a pipe is after `zfs recv`.
func (s *Stream) consume() {
	s.started, s.ended, s.chunk = true, true, nil
}

// Close releases the stream; reading after Close fails.
func (s *Stream) Close() error {
	s.closed = true
	s.chunk = nil
	return nil
}
