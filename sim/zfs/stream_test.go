package zfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// sampleStream builds a small incremental stream through a pool.
func sampleStream(t testing.TB) (*Pool, *Stream) {
	p := New(Options{SizeBytes: 1 << 30, BlockSizeBytes: 4096, Seed: 1})
	if err := p.CreateVolume("v", 1<<20, backend.Thin); err != nil {
		t.Fatal(err)
	}
	pooltest.Write(t, p, "v", 0, bytes.Repeat([]byte{1}, 10000))
	if err := p.Snapshot("v", "a"); err != nil {
		t.Fatal(err)
	}
	pooltest.Write(t, p, "v", 5000, bytes.Repeat([]byte{2}, 9000))
	if err := p.Snapshot("v", "b"); err != nil {
		t.Fatal(err)
	}
	stream, err := p.Send("v", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	return p, stream.(*Stream)
}

func encode(t testing.TB, s *Stream) []byte {
	t.Helper()
	data, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestStreamEncodingRoundTrips(t *testing.T) {
	_, s := sampleStream(t)
	// Bytes 5000..13999 touch blocks 1, 2 and 3 of 4096 bytes.
	if s.BlockCount() != 3 || !s.header.incremental() || s.header.clone {
		t.Fatalf("stream header %+v with %d blocks, want an incremental of 3 blocks", s.header, s.BlockCount())
	}
	want := s.Len()
	encoded := encode(t, s)
	if uint64(len(encoded)) != want || want != wantStreamBytes(1, 3, 4096) {
		t.Fatalf("encoded %d bytes, Len %d, formula %d", len(encoded), want, wantStreamBytes(1, 3, 4096))
	}
	// Read in one-byte pieces, as a slow pipe delivers it, it decodes the same.
	decoded, err := decodeStream(iotest.OneByteReader(bytes.NewReader(encoded)))
	if err != nil {
		t.Fatal(err)
	}
	if decoded.header != s.header || len(decoded.records) != len(s.records) {
		t.Fatalf("decoded %+v, sent %+v", decoded.header, s.header)
	}
	for i := range s.records {
		if decoded.records[i].index != s.records[i].index || !bytes.Equal(decoded.records[i].data, s.records[i].data) {
			t.Fatalf("record %d differs after a round trip", i)
		}
	}
	if again := encode(t, decoded); !bytes.Equal(again, encoded) {
		t.Fatal("re-encoding a decoded stream changes its bytes")
	}
}

func TestStreamReadAfterClose(t *testing.T) {
	_, s := sampleStream(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(make([]byte, 10)); err == nil {
		t.Fatal("a closed stream reads")
	}
}

// TestDecoderRefusals pins how each kind of damage is reported.
func TestDecoderRefusals(t *testing.T) {
	_, s := sampleStream(t)
	good := encode(t, s)
	patch := func(offset int, value uint64, width int) []byte {
		out := bytes.Clone(good)
		if width == 4 {
			binary.LittleEndian.PutUint32(out[offset:], uint32(value))
		} else {
			binary.LittleEndian.PutUint64(out[offset:], value)
		}
		return out
	}
	firstRecord := streamHeaderBytes + 1
	for _, c := range []struct {
		name   string
		stream []byte
		want   string
	}{
		{"empty", nil, "failed to read from stream"},
		{"short header", good[:20], "failed to read from stream"},
		{"bad magic", append([]byte("NOTZFS!!"), good[8:]...), "invalid stream (bad magic number)"},
		{"future version", patch(8, 2, 4), "unsupported feature"},
		{"unknown flag", patch(12, 2, 4), "unsupported feature"},
		{"block size not a power of two", patch(16, 3000, 4), "bad block size"},
		{"block size too large", patch(16, 1<<20, 4), "bad block size"},
		{"no name", patch(20, 0, 4), "bad snapshot name length"},
		{"huge name", patch(20, 1<<31, 4), "bad snapshot name length"},
		{"volume size zero", patch(24, 0, 8), "bad volume size"},
		{"volume size unaligned", patch(24, 4097, 8), "bad volume size"},
		{"snapshot guid zero", patch(40, 0, 8), "bad snapshot guid"},
		{"more blocks than the volume", patch(48, 1<<40, 8), "blocks in a volume"},
		{"truncated body", good[:len(good)-100], "incomplete stream"},
		{"missing trailer", good[:len(good)-8], "incomplete stream"},
		{"block beyond the volume", patch(firstRecord, 1<<30, 8), "out of order or range"},
		{"flipped data bit", func() []byte { b := bytes.Clone(good); b[firstRecord+100] ^= 1; return b }(), "checksum mismatch"},
	} {
		_, err := decodeStream(bytes.NewReader(c.stream))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

// TestReceiveWordsBrokenStreams checks that Receive wraps decoder refusals as
// zfs does: header trouble under "cannot receive", body trouble under the
// stream's kind.
func TestReceiveWordsBrokenStreams(t *testing.T) {
	p, _ := sampleStream(t)
	full, err := p.Send("v", "", "a")
	if err != nil {
		t.Fatal(err)
	}
	encoded := encode(t, full.(*Stream))
	q := New(Options{SizeBytes: 1 << 30, Seed: 2})
	for _, c := range []struct {
		stream []byte
		want   string
	}{
		{encoded[:10], "zfs: cannot receive: failed to read from stream"},
		{encoded[:len(encoded)-1], "zfs: cannot receive new filesystem stream: incomplete stream"},
	} {
		err := q.Receive("r", bytes.NewReader(c.stream))
		if !errors.Is(err, backend.ErrInvalid) || err.Error() != c.want {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	if len(q.volumes) != 0 {
		t.Fatal("a broken stream left a volume")
	}
}

// TestReceiveFastPathMatchesBytes receives one stream through the sim's
// fast path and its copy through the encoding: the results are equal, and
// the fast path consumes the stream as a pipe is consumed.
func TestReceiveFastPathMatchesBytes(t *testing.T) {
	p, _ := sampleStream(t)
	send := func() *Stream {
		s, err := p.Send("v", "", "b")
		if err != nil {
			t.Fatal(err)
		}
		return s.(*Stream)
	}
	q := New(Options{SizeBytes: 1 << 30, BlockSizeBytes: 4096, Seed: 3})
	direct := send()
	if err := q.Receive("fast", direct); err != nil {
		t.Fatal(err)
	}
	if err := q.Receive("again", direct); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("receiving a consumed stream: %v, want ErrInvalid", err)
	}
	if err := q.Receive("slow", bytes.NewReader(encode(t, send()))); err != nil {
		t.Fatal(err)
	}
	fast, slow := treeBlocks(q.volumes["fast"].head), treeBlocks(q.volumes["slow"].head)
	if len(fast) != len(slow) || len(fast) != 4 {
		t.Fatalf("fast path %d blocks, bytes %d, want 4", len(fast), len(slow))
	}
	for index, b := range fast {
		if !bytes.Equal(b.data, slow[index].data) {
			t.Fatalf("block %d differs between the paths", index)
		}
	}
	if err := q.Verify(); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecode feeds the decoder garbage and mutations of real streams. It must
// never panic, and a stream it accepts must re-encode to the bytes it read.
func FuzzDecode(f *testing.F) {
	// A small stream (512-byte blocks) keeps the seed short for the mutator.
	p := New(Options{SizeBytes: 1 << 20, BlockSizeBytes: minBlockSizeBytes, Seed: 1})
	if err := p.CreateVolume("v", 64<<10, backend.Thin); err != nil {
		f.Fatal(err)
	}
	pooltest.Write(f, p, "v", 700, bytes.Repeat([]byte{7}, 600))
	if err := p.Snapshot("v", "s"); err != nil {
		f.Fatal(err)
	}
	full, err := p.Send("v", "", "s")
	if err != nil {
		f.Fatal(err)
	}
	good := encode(f, full.(*Stream))
	f.Add(good)
	f.Add(good[:streamHeaderBytes+1])
	f.Add([]byte(streamMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		decoded, err := decodeStream(bytes.NewReader(data))
		if err != nil {
			return
		}
		again := encode(t, decoded)
		if !bytes.Equal(again, data[:len(again)]) {
			t.Fatal("an accepted stream re-encodes differently")
		}
		if decoded.Len() != uint64(len(again)) {
			t.Fatalf("Len %d, encoded %d", decoded.Len(), len(again))
		}
	})
}
