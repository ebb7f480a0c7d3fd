package zfs

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc64"
	"io"
)

// streamError is a stream the decoder refuses. Receive words it as zfs does:
// a header it cannot use is "cannot receive: ...", a body that breaks off or
// fails its checksum is reported against the kind of stream it began as.
type streamError struct {
	inBody  bool
	message string
}

func (e *streamError) Error() string { return e.message }

func headerError(format string, args ...any) *streamError {
	return &streamError{message: fmt.Sprintf(format, args...)}
}

// decoder reads a stream from outside input. It trusts nothing: every size
// is checked against the header and the sanity limits before it is used, and
// memory grows only with the input actually read (one block ahead at most),
// never with what a header claims.
type decoder struct {
	r   io.Reader
	crc hash.Hash64
}

func newDecoder(r io.Reader) *decoder { return &decoder{r: r, crc: crc64.New(crcTable)} }

// read fills buf from the stream and feeds the checksum.
func (d *decoder) read(buf []byte) bool {
	if _, err := io.ReadFull(d.r, buf); err != nil {
		return false
	}
	d.crc.Write(buf)
	return true
}

// header reads and checks the fixed header and the snapshot name.
func (d *decoder) header() (streamHeader, error) {
	fixed := make([]byte, streamHeaderBytes)
	if !d.read(fixed) {
		return streamHeader{}, headerError("failed to read from stream")
	}
	if string(fixed[:8]) != streamMagic {
		return streamHeader{}, headerError("invalid stream (bad magic number)")
	}
	le := binary.LittleEndian
	version, flags := le.Uint32(fixed[8:]), le.Uint32(fixed[12:])
	if version != streamVersion || flags&^knownFlags != 0 {
		return streamHeader{}, headerError("stream has unsupported feature, version = %d, flags = %x", version, flags)
	}
	h := streamHeader{
		blockSizeBytes:  uint64(le.Uint32(fixed[16:])),
		volumeSizeBytes: le.Uint64(fixed[24:]),
		baseGUID:        le.Uint64(fixed[32:]),
		snapshotGUID:    le.Uint64(fixed[40:]),
		clone:           flags&flagClone != 0,
		blockCount:      le.Uint64(fixed[48:]),
	}
	nameBytes := le.Uint32(fixed[20:])
	if err := h.check(nameBytes); err != nil {
		return streamHeader{}, err
	}
	name := make([]byte, nameBytes)
	if !d.read(name) {
		return streamHeader{}, headerError("failed to read from stream")
	}
	h.snapshot = string(name)
	if why, ok := checkComponent(h.snapshot); !ok {
		return streamHeader{}, headerError("invalid stream (snapshot name: %s)", why)
	}
	return h, nil
}

// check applies the sanity limits to the fixed header.
func (h streamHeader) check(nameBytes uint32) error {
	switch {
	case !validBlockSize(h.blockSizeBytes):
		return headerError("invalid stream (bad block size %d)", h.blockSizeBytes)
	case h.volumeSizeBytes == 0 || h.volumeSizeBytes > maxVolumeSizeBytes || h.volumeSizeBytes%h.blockSizeBytes != 0:
		return headerError("invalid stream (bad volume size %d)", h.volumeSizeBytes)
	case h.snapshotGUID == 0 || h.snapshotGUID == h.baseGUID:
		return headerError("invalid stream (bad snapshot guid)")
	case h.clone && h.baseGUID == 0:
		return headerError("invalid stream (a clone stream without a base)")
	case h.blockCount > h.volumeSizeBytes/h.blockSizeBytes:
		return headerError("invalid stream (%d blocks in a volume of %d)", h.blockCount, h.volumeSizeBytes/h.blockSizeBytes)
	case nameBytes == 0 || nameBytes > maxNameBytes:
		return headerError("invalid stream (bad snapshot name length %d)", nameBytes)
	}
	return nil
}

// body reads the records and the trailer. The records must be in increasing
// index order within the volume, which also rules out a block sent twice.
func (d *decoder) body(h streamHeader) ([]record, error) {
	incomplete := &streamError{inBody: true, message: "incomplete stream"}
	blocks := h.volumeSizeBytes / h.blockSizeBytes
	var records []record
	indexBuf := make([]byte, recordHeaderBytes)
	for i := uint64(0); i < h.blockCount; i++ {
		if !d.read(indexBuf) {
			return nil, incomplete
		}
		index := binary.LittleEndian.Uint64(indexBuf)
		if index >= blocks || (i > 0 && index <= records[i-1].index) {
			return nil, &streamError{inBody: true, message: fmt.Sprintf("invalid stream (block %d out of order or range)", index)}
		}
		data := make([]byte, h.blockSizeBytes)
		if !d.read(data) {
			return nil, incomplete
		}
		records = append(records, record{index: index, data: data})
	}
	want := d.crc.Sum64()
	trailer := make([]byte, streamTrailerBytes)
	if _, err := io.ReadFull(d.r, trailer); err != nil {
		return nil, incomplete
	}
	if binary.LittleEndian.Uint64(trailer) != want {
		return nil, &streamError{inBody: true, message: "checksum mismatch"}
	}
	return records, nil
}

// decodeStream reads a whole stream: the fuzz target's entry, and the shape
// of what Receive does in two steps.
func decodeStream(r io.Reader) (*Stream, error) {
	d := newDecoder(r)
	h, err := d.header()
	if err != nil {
		return nil, err
	}
	records, err := d.body(h)
	if err != nil {
		return nil, err
	}
	return newStream(h, records), nil
}
