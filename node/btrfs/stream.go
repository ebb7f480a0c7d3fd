package btrfs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// A stream of this pool is a small envelope followed by the bytes of
// `btrfs send`, untouched:
//
//	"baton-btrfs\x00"   12 bytes of magic
//	version             uint32, little-endian: 1
//	flags               uint32, little-endian: bit 0 = clone stream
//	btrfs send stream   "btrfs-stream\x00", its version, then its commands
//
// The envelope exists for one fact btrfs does not carry: whether the sender's
// base is a snapshot of the volume itself or, for a clone, of its origin.
// Both are the same `btrfs send -p`; the receiver refuses a plain delta into
// a missing volume (ErrNoBase) but creates a missing volume from a clone
// stream, so it must know which it holds. Integrity needs nothing of ours:
// every btrfs command carries a CRC-32C, and btrfs receive refuses a stream
// that ends before its end command.
const (
	envelopeMagic   = "baton-btrfs\x00"
	envelopeVersion = 1
	envelopeBytes   = len(envelopeMagic) + 8
	flagClone       = 1 << 0
)

func envelope(clone bool) []byte {
	out := make([]byte, envelopeBytes)
	copy(out, envelopeMagic)
	binary.LittleEndian.PutUint32(out[12:], envelopeVersion)
	if clone {
		binary.LittleEndian.PutUint32(out[16:], flagClone)
	}
	return out
}

// The btrfs send stream format (btrfs-progs common/send-stream.h, kernel
// fs/btrfs/send.h): a header, then commands {length u32, command u16, crc
// u32, attributes}, each attribute {type u16, length u16, value}.
const (
	sendMagic        = "btrfs-stream\x00"
	sendHeaderBytes  = len(sendMagic) + 4
	commandHeader    = 10
	maxFirstCommand  = 4096 // a path, two UUIDs and two transids fit many times
	cmdSubvol        = 1
	cmdSnapshot      = 2
	attrUUID         = 1
	attrCtransid     = 2
	attrPath         = 15
	attrCloneUUID    = 20
	attrCloneCtrans  = 21
	maxStreamVersion = 3
)

// streamHeader is what Receive plans with: the envelope and the stream's
// first command, which creates the received subvolume.
type streamHeader struct {
	clone    bool
	name     string // the snapshot's name: the sent subvolume's last path component
	uuid     string // the snapshot's GUID on the sender
	baseUUID string // the base's GUID; "" for a full stream
}

func (h streamHeader) incremental() bool { return h.baseUUID != "" }

// errStream is the kind of every malformed stream.
var errStream = errors.New("not a baton btrfs stream")

// readStreamHeader reads the envelope from r and peeks at the btrfs header
// and first command, leaving them in r for btrfs receive to read.
func readStreamHeader(r *bufio.Reader) (streamHeader, error) {
	var env [envelopeBytes]byte
	if _, err := io.ReadFull(r, env[:]); err != nil {
		return streamHeader{}, fmt.Errorf("%w: envelope: %v", errStream, err)
	}
	h, err := parseEnvelope(env[:])
	if err != nil {
		return h, err
	}
	head, err := r.Peek(sendHeaderBytes + commandHeader)
	if err != nil {
		return h, fmt.Errorf("%w: send stream header: %v", errStream, err)
	}
	length := binary.LittleEndian.Uint32(head[sendHeaderBytes:])
	if length > maxFirstCommand {
		return h, fmt.Errorf("%w: first command of %d bytes", errStream, length)
	}
	first, err := r.Peek(sendHeaderBytes + commandHeader + int(length))
	if err != nil {
		return h, fmt.Errorf("%w: first command: %v", errStream, err)
	}
	return parseFirstCommand(h, first)
}

func parseEnvelope(env []byte) (streamHeader, error) {
	var h streamHeader
	if string(env[:len(envelopeMagic)]) != envelopeMagic {
		return h, fmt.Errorf("%w: bad magic", errStream)
	}
	if v := binary.LittleEndian.Uint32(env[12:]); v != envelopeVersion {
		return h, fmt.Errorf("%w: envelope version %d", errStream, v)
	}
	flags := binary.LittleEndian.Uint32(env[16:])
	if flags&^flagClone != 0 {
		return h, fmt.Errorf("%w: unknown flags %#x", errStream, flags)
	}
	h.clone = flags&flagClone != 0
	return h, nil
}

// crc32c is the checksum of send stream commands: CRC-32C seeded with 0 and
// not inverted (the kernel's crc32c(0, ...)), where Go's crc32 inverts both
// its seed and its result.
func crc32c(data []byte) uint32 {
	return ^crc32.Update(^uint32(0), castagnoli, data)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// parseFirstCommand reads the send stream's header and first command (a
// SUBVOL for a full stream, a SNAPSHOT for an incremental one) from data,
// which holds exactly the two.
func parseFirstCommand(h streamHeader, data []byte) (streamHeader, error) {
	if len(data) < sendHeaderBytes+commandHeader || string(data[:len(sendMagic)]) != sendMagic {
		return h, fmt.Errorf("%w: no btrfs send stream header", errStream)
	}
	if v := binary.LittleEndian.Uint32(data[len(sendMagic):]); v == 0 || v > maxStreamVersion {
		return h, fmt.Errorf("%w: send stream version %d", errStream, v)
	}
	cmd := data[sendHeaderBytes:]
	length := binary.LittleEndian.Uint32(cmd)
	if int(length) != len(cmd)-commandHeader {
		return h, fmt.Errorf("%w: first command length %d", errStream, length)
	}
	kind := binary.LittleEndian.Uint16(cmd[4:])
	sum := binary.LittleEndian.Uint32(cmd[6:])
	check := append([]byte(nil), cmd...)
	clear(check[6:10])
	if crc32c(check) != sum {
		return h, fmt.Errorf("%w: first command checksum", errStream)
	}
	attrs, err := parseAttributes(cmd[commandHeader:])
	if err != nil {
		return h, err
	}
	return h.fill(kind, attrs)
}

func parseAttributes(data []byte) (map[uint16][]byte, error) {
	attrs := map[uint16][]byte{}
	for len(data) > 0 {
		if len(data) < 4 {
			return nil, fmt.Errorf("%w: truncated attribute", errStream)
		}
		kind, length := binary.LittleEndian.Uint16(data), int(binary.LittleEndian.Uint16(data[2:]))
		if len(data) < 4+length {
			return nil, fmt.Errorf("%w: attribute %d overruns its command", errStream, kind)
		}
		if _, dup := attrs[kind]; dup {
			return nil, fmt.Errorf("%w: attribute %d twice", errStream, kind)
		}
		attrs[kind] = data[4 : 4+length]
		data = data[4+length:]
	}
	return attrs, nil
}

// fill takes the first command's attributes into the header.
func (h streamHeader) fill(kind uint16, attrs map[uint16][]byte) (streamHeader, error) {
	if kind != cmdSubvol && kind != cmdSnapshot {
		return h, fmt.Errorf("%w: first command %d is neither subvol nor snapshot", errStream, kind)
	}
	path, uuid := attrs[attrPath], attrs[attrUUID]
	if len(path) == 0 || len(uuid) != 16 || len(attrs[attrCtransid]) != 8 {
		return h, fmt.Errorf("%w: first command lacks a path, uuid or transid", errStream)
	}
	h.name, h.uuid = string(path), formatUUID(uuid)
	if kind == cmdSubvol {
		if h.clone {
			return h, fmt.Errorf("%w: a clone stream without a base", errStream)
		}
		return h, nil
	}
	base := attrs[attrCloneUUID]
	if len(base) != 16 || len(attrs[attrCloneCtrans]) != 8 {
		return h, fmt.Errorf("%w: snapshot command lacks its base", errStream)
	}
	h.baseUUID = formatUUID(base)
	return h, nil
}

// formatUUID prints 16 bytes as btrfs prints a UUID.
func formatUUID(b []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}
