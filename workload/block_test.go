package workload

import (
	"bytes"
	"testing"
)

func sealedBlock(seq uint64) []byte {
	buf := make([]byte, BlockSizeBytes)
	fillRandom(buf[headerSizeBytes:], seq)
	sealBlock(buf, header{kind: KindObject, seq: seq, block: 7, workload: nameField("w"), volume: nameField("v")})
	return buf
}

func TestBlockRoundTrip(t *testing.T) {
	buf := sealedBlock(42)
	h, state := decodeBlock(buf)
	if state != blockValid || h.seq != 42 || h.block != 7 || h.kind != KindObject || h.workload != nameField("w") || h.volume != nameField("v") {
		t.Fatalf("decoded %+v, %s", h, state)
	}
	if !bytes.Equal(buf, sealedBlock(42)) {
		t.Fatal("decoding changed the block")
	}
}

func TestBlockStates(t *testing.T) {
	flipped := sealedBlock(1)
	flipped[BlockSizeBytes-1] ^= 0x10
	garbage := make([]byte, BlockSizeBytes)
	garbage[100] = 1
	for _, tc := range []struct {
		name string
		buf  []byte
		want blockState
	}{
		{"zero", make([]byte, BlockSizeBytes), blockZero},
		{"valid", sealedBlock(1), blockValid},
		{"flipped payload bit", flipped, blockChecksum},
		{"no magic", garbage, blockGarbage},
	} {
		if _, got := decodeBlock(tc.buf); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestNameFieldRefusesLongNames(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a 17-byte name was accepted")
		}
	}()
	nameField("seventeen-bytes!!")
}

// FuzzDecodeBlock: any 4 KiB decodes without panicking, and only a block whose
// checksum holds is valid.
func FuzzDecodeBlock(f *testing.F) {
	f.Add(sealedBlock(1)[:headerSizeBytes+8])
	f.Add([]byte("BATONWL1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		buf := make([]byte, BlockSizeBytes)
		copy(buf, data)
		before := bytes.Clone(buf)
		h, state := decodeBlock(buf)
		if !bytes.Equal(buf, before) {
			t.Fatal("decoding changed the block")
		}
		if state == blockValid && h.kind.valid() && h.seq != 0 && bytes.Equal(buf[13:16], []byte{0, 0, 0}) {
			resealed := bytes.Clone(buf)
			if sealBlock(resealed, h) != h.checksum || !bytes.Equal(resealed, buf) {
				t.Fatal("a valid block does not reseal to itself")
			}
		}
	})
}
