package drbd

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/baton-dr/baton/storage/backend"
)

// superblockBytes is the metadata area at the end of a backing volume. Real
// internal metadata is larger (128 KiB and the bitmap); the size only moves the
// end of the DRBD device, which callers must read from the device, not assume.
const superblockBytes = blockBytes

// historyLength is how many former current UUIDs the metadata keeps, as many
// as DRBD 9's history slots.
const historyLength = 4

// superblockMagic marks the simulation's metadata; "v1" is its layout.
var superblockMagic = [8]byte{'D', 'R', 'B', 'D', 'S', 'I', 'M', '1'}

// superblock is the part of a replica's metadata that lives on its backing
// volume and so travels with the volume's bytes (snapshots, sends, clones).
type superblock struct {
	origin    uint64 // which site's Cluster wrote it (a hash of the site name)
	serial    uint64 // which create-md wrote it, unique within the origin
	current   uint64 // the current data generation UUID; 0 = just created
	history   [historyLength]uint64
	disk      backend.DiskState
	sizeBytes uint64
}

// superblockEncodedBytes is the length of an encoded superblock; the rest of
// the metadata block stays zero.
const superblockEncodedBytes = 8 + 8 + 8 + 8 + historyLength*8 + 1 + 8 + 4

func (s superblock) encode() []byte {
	b := make([]byte, superblockBytes)
	copy(b, superblockMagic[:])
	at := 8
	put := func(v uint64) { binary.BigEndian.PutUint64(b[at:], v); at += 8 }
	put(s.origin)
	put(s.serial)
	put(s.current)
	for _, h := range s.history {
		put(h)
	}
	b[at] = byte(s.disk)
	at++
	put(s.sizeBytes)
	binary.BigEndian.PutUint32(b[at:], crc32.ChecksumIEEE(b[:at]))
	return b
}

// decodeSuperblock parses the metadata block of a backing volume. Anything but
// an intact superblock (zeros, a filesystem, a torn write) is "no metadata":
// that is what drbdmeta concludes from a bad signature or checksum.
func decodeSuperblock(b []byte) (superblock, bool) {
	var s superblock
	if len(b) < superblockEncodedBytes || [8]byte(b[:8]) != superblockMagic {
		return s, false
	}
	end := superblockEncodedBytes - 4
	if binary.BigEndian.Uint32(b[end:]) != crc32.ChecksumIEEE(b[:end]) {
		return s, false
	}
	at := 8
	get := func() uint64 { v := binary.BigEndian.Uint64(b[at:]); at += 8; return v }
	s.origin = get()
	s.serial = get()
	s.current = get()
	for i := range s.history {
		s.history[i] = get()
	}
	s.disk = backend.DiskState(b[at])
	at++
	s.sizeBytes = get()
	if !validDisk(s.disk) {
		return superblock{}, false
	}
	return s, true
}
