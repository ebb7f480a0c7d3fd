package drbd

import (
	"bytes"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

func TestSuperblockRoundTrip(t *testing.T) {
	sb := superblock{origin: 7, serial: 9, current: 0xabc0, history: [historyLength]uint64{1, 2, 3, 4},
		disk: backend.Outdated, sizeBytes: 1 << 30}
	got, ok := decodeSuperblock(sb.encode())
	if !ok || got != sb {
		t.Fatalf("decode(encode(%+v)) = %+v, %t", sb, got, ok)
	}
}

func TestSuperblockRejects(t *testing.T) {
	good := superblock{serial: 1, disk: backend.UpToDate, sizeBytes: 1 << 20}.encode()
	torn := bytes.Clone(good)
	torn[20] ^= 1
	badDisk := superblock{serial: 1, disk: backend.Diskless}.encode()
	tests := map[string][]byte{
		"zeros":      make([]byte, superblockBytes),
		"short":      good[:superblockEncodedBytes-1],
		"torn write": torn,
		"diskless":   badDisk,
		"ext4-ish":   append([]byte("\x53\xef"), make([]byte, superblockBytes)...),
	}
	for name, b := range tests {
		if _, ok := decodeSuperblock(b); ok {
			t.Errorf("%s decodes as metadata", name)
		}
	}
}

// FuzzDecodeSuperblock: whatever a volume holds at its end (a filesystem, a
// foreign tool's metadata, garbage), decoding never panics, and what it
// accepts re-encodes to the same bytes.
func FuzzDecodeSuperblock(f *testing.F) {
	f.Add(superblock{serial: 1, current: 2, disk: backend.UpToDate, sizeBytes: 1 << 20}.encode())
	f.Add(make([]byte, superblockBytes))
	f.Add([]byte("DRBDSIM1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		sb, ok := decodeSuperblock(b)
		if !ok {
			return
		}
		if !validDisk(sb.disk) {
			t.Fatalf("accepted disk state %v", sb.disk)
		}
		if again := sb.encode(); !bytes.Equal(again[:superblockEncodedBytes], b[:superblockEncodedBytes]) {
			t.Fatalf("re-encoding differs")
		}
	})
}
