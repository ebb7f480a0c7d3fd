package stream

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/agent"
)

func sampleHeader() agent.StreamHeader {
	return agent.StreamHeader{Source: "aaaaaaaa-0000-4000-8000-00000000000a", Dataset: "rep-1",
		Snapshot: "baton-000001", GUID: "12345678901234567890", Token: "t0k3n-\x00\xff-opaque"}
}

func TestAHeaderSurvivesTheWire(t *testing.T) {
	h := sampleHeader()
	frame, err := encodeHeader(h)
	if err != nil {
		t.Fatal(err)
	}
	trailing := append(frame, "body bytes"...)
	r := bytes.NewReader(trailing)
	got, err := readHeader(r)
	if err != nil || got != h {
		t.Fatalf("read %+v, %v; want %+v", got, err, h)
	}
	if r.Len() != len("body bytes") {
		t.Fatalf("the decoder read %d bytes past the header", len("body bytes")-r.Len())
	}
}

func TestHeadersBeyondTheLimitsAreRefused(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name   string
		change func(*agent.StreamHeader)
	}{
		{"no dataset", func(h *agent.StreamHeader) { h.Dataset = "" }},
		{"no snapshot", func(h *agent.StreamHeader) { h.Snapshot = "" }},
		{"no source", func(h *agent.StreamHeader) { h.Source = "" }},
		{"dataset too long", func(h *agent.StreamHeader) { h.Dataset = long(257) }},
		{"token too long", func(h *agent.StreamHeader) { h.Token = long(1025) }},
		{"control character in a name", func(h *agent.StreamHeader) { h.Snapshot = "s\n1" }},
		{"invalid UTF-8 in a name", func(h *agent.StreamHeader) { h.Dataset = "rep\xff" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := sampleHeader()
			tt.change(&h)
			if _, err := encodeHeader(h); !errors.Is(err, ErrProtocol) {
				t.Fatalf("encode: %v, want ErrProtocol", err)
			}
		})
	}
}

func TestMalformedHeaderFramesAreRefused(t *testing.T) {
	good, _ := encodeHeader(sampleHeader())
	patch := func(at int, b ...byte) []byte {
		f := bytes.Clone(good)
		copy(f[at:], b)
		return f
	}
	tests := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"empty", nil, "failed to read the header"},
		{"bad magic", patch(0, 'X'), "bad magic"},
		{"another version", patch(8, 2), "protocol version 2"},
		{"payload over the limit", patch(9, 0x10, 0x01), "exceeds"},
		{"payload cut short", good[:len(good)-1], "failed to read the header"},
		{"field past the payload", patch(11, 0xff, 0xff), "runs past its end"},
		{"bytes after the last field", append(patch(9, 0, byte(len(good)-headerPrefixBytes+1)), 'x'), "follow the header's last field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readHeader(bytes.NewReader(tt.frame))
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("read: %v, want ErrProtocol saying %q", err, tt.want)
			}
		})
	}
}

// An error about a header never quotes the token, whatever is wrong with it.
func TestHeaderErrorsNeverQuoteTheToken(t *testing.T) {
	h := sampleHeader()
	h.Token = "SECRET" + strings.Repeat("s", 1100)
	_, err := encodeHeader(h)
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("encode: %v", err)
	}
}

// FuzzReadHeader feeds the decoder arbitrary bytes: it never panics, never
// reads past the frame it accepts, and accepts exactly one encoding of each
// header (re-encoding what it read gives the bytes it consumed).
func FuzzReadHeader(f *testing.F) {
	good, _ := encodeHeader(sampleHeader())
	f.Add(good)
	f.Add(good[:20])
	f.Add([]byte(headerMagic + "\x01\x00\x00"))
	empty, _ := encodeHeader(agent.StreamHeader{Source: "s", Dataset: "d", Snapshot: "x"})
	f.Add(empty)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		h, err := readHeader(r)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("an error that is not ErrProtocol: %v", err)
			}
			return
		}
		consumed := data[:len(data)-r.Len()]
		again, err := encodeHeader(h)
		if err != nil {
			t.Fatalf("the decoder accepted a header the encoder refuses: %v", err)
		}
		if !bytes.Equal(again, consumed) {
			t.Fatalf("two encodings of one header:\n%x\n%x", consumed, again)
		}
	})
}
