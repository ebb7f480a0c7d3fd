package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// BlockSizeBytes is the unit of every write. The models write whole, aligned
// blocks, which the devices apply atomically.
const BlockSizeBytes = 4096

// The header every block carries, little-endian:
//
//	0   magic     [8]  "BATONWL1"
//	8   checksum  u32  CRC-32C of the whole block with this field zero
//	12  kind      u8   BlockKind
//	13  reserved  [3]
//	16  seq       u64  the write's sequence number in its volume's history
//	24  block     u64  the block address the write was aimed at
//	32  workload  [16] name, zero-padded
//	48  volume    [16] name, zero-padded
//	64  payload
const (
	headerSizeBytes  = 64
	payloadSizeBytes = BlockSizeBytes - headerSizeBytes
	nameSizeBytes    = 16

	offsetChecksum = 8
	offsetKind     = 12
	offsetSeq      = 16
	offsetBlock    = 24
	offsetWorkload = 32
	offsetVolume   = 48
)

var blockMagic = [8]byte{'B', 'A', 'T', 'O', 'N', 'W', 'L', '1'}

// castagnoli is read-only after package initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// zeroBlock is never written: it is what a never-written block reads as.
var zeroBlock [BlockSizeBytes]byte

// BlockKind says which application structure a block holds.
type BlockKind uint8

const (
	// KindDatabaseControl: the database's control block (the checkpoint pointer).
	KindDatabaseControl BlockKind = iota + 1
	// KindDatabaseLog: one block of redo-log records of one transaction.
	KindDatabaseLog
	// KindDatabasePage: a data page written at a checkpoint.
	KindDatabasePage
	// KindDirectory: a block of the uploads directory (file entries).
	KindDirectory
	// KindFileData: one data block of an uploaded file.
	KindFileData
	// KindRefs: the repository's refs block.
	KindRefs
	// KindObject: one block of a content-addressed repository object.
	KindObject
)

func (k BlockKind) String() string {
	switch k {
	case KindDatabaseControl:
		return "database control"
	case KindDatabaseLog:
		return "database log"
	case KindDatabasePage:
		return "database page"
	case KindDirectory:
		return "directory"
	case KindFileData:
		return "file data"
	case KindRefs:
		return "refs"
	case KindObject:
		return "object"
	}
	return fmt.Sprintf("BlockKind(%d)", uint8(k))
}

func (k BlockKind) valid() bool { return k >= KindDatabaseControl && k <= KindObject }

// header is a decoded block header.
type header struct {
	kind     BlockKind
	seq      uint64
	block    uint64
	workload [nameSizeBytes]byte
	volume   [nameSizeBytes]byte
	checksum uint32
}

// blockState is what decodeBlock made of a block's bytes.
type blockState uint8

const (
	blockZero     blockState = iota + 1 // all zero: never written
	blockValid                          // a workload block whose checksum holds
	blockGarbage                        // not zero, no workload header
	blockChecksum                       // a workload header, but the checksum fails
)

func (s blockState) String() string {
	switch s {
	case blockZero:
		return "zero"
	case blockValid:
		return "valid"
	case blockGarbage:
		return "garbage"
	case blockChecksum:
		return "checksum mismatch"
	}
	return fmt.Sprintf("blockState(%d)", uint8(s))
}

// nameField pads a name into a header field. Names are chosen by the program,
// so one that does not fit is a programming error.
func nameField(name string) [nameSizeBytes]byte {
	if name == "" || len(name) > nameSizeBytes {
		panic(fmt.Sprintf("workload: name %q must be 1 to %d bytes", name, nameSizeBytes))
	}
	var field [nameSizeBytes]byte
	copy(field[:], name)
	return field
}

// fieldName is the readable form of a name field.
func fieldName(field [nameSizeBytes]byte) string {
	return fmt.Sprintf("%q", string(bytes.TrimRight(field[:], "\x00")))
}

// sealBlock writes the header into a block whose payload is already in place,
// and returns the checksum it computed.
func sealBlock(buf []byte, h header) uint32 {
	if len(buf) != BlockSizeBytes || !h.kind.valid() || h.seq == 0 {
		panic(fmt.Sprintf("workload: sealing a block of %d bytes, kind %s, seq %d", len(buf), h.kind, h.seq))
	}
	copy(buf[0:8], blockMagic[:])
	binary.LittleEndian.PutUint32(buf[offsetChecksum:], 0)
	buf[offsetKind] = byte(h.kind)
	buf[13], buf[14], buf[15] = 0, 0, 0
	binary.LittleEndian.PutUint64(buf[offsetSeq:], h.seq)
	binary.LittleEndian.PutUint64(buf[offsetBlock:], h.block)
	copy(buf[offsetWorkload:offsetWorkload+nameSizeBytes], h.workload[:])
	copy(buf[offsetVolume:offsetVolume+nameSizeBytes], h.volume[:])
	sum := crc32.Checksum(buf, castagnoli)
	binary.LittleEndian.PutUint32(buf[offsetChecksum:], sum)
	return sum
}

// decodeBlock classifies a block's bytes and decodes its header when it has
// one. The block is restored as it was found.
func decodeBlock(buf []byte) (header, blockState) {
	if len(buf) != BlockSizeBytes {
		panic(fmt.Sprintf("workload: decoding a block of %d bytes", len(buf)))
	}
	if bytes.Equal(buf, zeroBlock[:]) {
		return header{}, blockZero
	}
	if !bytes.Equal(buf[0:8], blockMagic[:]) {
		return header{}, blockGarbage
	}
	// The fields are decoded even when the checksum fails: they say which
	// write the damaged block claims to be, for the report.
	h := header{
		kind:     BlockKind(buf[offsetKind]),
		seq:      binary.LittleEndian.Uint64(buf[offsetSeq:]),
		block:    binary.LittleEndian.Uint64(buf[offsetBlock:]),
		checksum: binary.LittleEndian.Uint32(buf[offsetChecksum:]),
	}
	copy(h.workload[:], buf[offsetWorkload:offsetWorkload+nameSizeBytes])
	copy(h.volume[:], buf[offsetVolume:offsetVolume+nameSizeBytes])
	binary.LittleEndian.PutUint32(buf[offsetChecksum:], 0)
	sum := crc32.Checksum(buf, castagnoli)
	binary.LittleEndian.PutUint32(buf[offsetChecksum:], h.checksum)
	if sum != h.checksum {
		return h, blockChecksum
	}
	return h, blockValid
}

// fillRandom fills dst with bytes expanded from one seed (SplitMix64), which is
// far cheaper than drawing every word from the workload's generator and as
// incompressible for a send stream.
func fillRandom(dst []byte, seed uint64) {
	state := seed
	for len(dst) >= 8 {
		state += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(dst, mix64(state))
		dst = dst[8:]
	}
	if len(dst) > 0 {
		var tail [8]byte
		state += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(tail[:], mix64(state))
		copy(dst, tail[:])
	}
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
