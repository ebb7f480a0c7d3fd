package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// chunked frames data as a sender does, in chunks of at most chunkBytes.
func chunked(data []byte, chunkBytes int, end bool) []byte {
	var out []byte
	for len(data) > 0 {
		n := min(len(data), chunkBytes)
		out = binary.BigEndian.AppendUint32(out, uint32(n))
		out = append(out, data[:n]...)
		data = data[n:]
	}
	if end {
		out = binary.BigEndian.AppendUint32(out, 0)
	}
	return out
}

func TestABodyReadsAsItsBytesAndEndsOnlyAtTheMarker(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 1000)
	tests := []struct {
		name    string
		wire    []byte
		wantErr error
	}{
		{"whole", chunked(data, 777, true), nil},
		{"no end marker", chunked(data, 777, false), ErrInterrupted},
		{"cut inside a chunk", chunked(data, 777, true)[:5000], ErrInterrupted},
		{"cut inside a length", chunked(data, 777, true)[:2], ErrInterrupted},
		{"a chunk over the limit", binary.BigEndian.AppendUint32(nil, maxChunkBytes+1), ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := newBodyReader(bytes.NewReader(tt.wire))
			got, err := io.ReadAll(body)
			switch {
			case tt.wantErr == nil && (err != nil || !bytes.Equal(got, data) || !body.ended):
				t.Fatalf("read %d bytes, %v, ended %v", len(got), err, body.ended)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("read: %v, want %v", err, tt.wantErr)
			case tt.wantErr != nil && body.ended:
				t.Fatal("a broken body counts as ended")
			}
			if body.bytes != uint64(len(got)) {
				t.Fatalf("counted %d bytes, read %d", body.bytes, len(got))
			}
		})
	}
}

func TestDrainStopsAtTheMarkerOrTheLimit(t *testing.T) {
	wire := chunked(make([]byte, 10000), 1000, true)
	after := []byte("next")
	r := bytes.NewReader(append(bytes.Clone(wire), after...))
	body := newBodyReader(r)
	io.ReadFull(body, make([]byte, 1500))
	if !body.drain(1 << 20) {
		t.Fatal("drain did not reach the end marker")
	}
	if r.Len() != len(after) {
		t.Fatalf("drain read %d bytes past the marker", len(after)-r.Len())
	}
	body = newBodyReader(bytes.NewReader(wire))
	if body.drain(4000) || body.bytes != 4000 {
		t.Fatalf("drain with a limit of 4000 discarded %d bytes", body.bytes)
	}
}

// FuzzBodyReader: arbitrary wire bytes never panic the receiver, never yield
// more than the wire holds, and end in io.EOF only after an end marker.
func FuzzBodyReader(f *testing.F) {
	f.Add(chunked([]byte("hello"), 2, true))
	f.Add(chunked([]byte("hello"), 2, false))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, wire []byte) {
		body := newBodyReader(bytes.NewReader(wire))
		got, err := io.ReadAll(body)
		if len(got) > len(wire) {
			t.Fatalf("read %d bytes from a wire of %d", len(got), len(wire))
		}
		if (err == nil) != body.ended {
			t.Fatalf("read ended with %v, end marker seen %v", err, body.ended)
		}
		if err != nil && !errors.Is(err, ErrInterrupted) && !errors.Is(err, ErrProtocol) {
			t.Fatalf("an error of no kind: %v", err)
		}
		if body.bytes != uint64(len(got)) {
			t.Fatalf("counted %d bytes, read %d", body.bytes, len(got))
		}
	})
}
