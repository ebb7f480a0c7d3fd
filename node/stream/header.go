package stream

import (
	"encoding/binary"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"

	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/storage/chain"
)

// The header frame, big-endian:
//
//	magic    8 bytes "BATONSHP"
//	version  u8 (protocolVersion)
//	length   u16: the payload's bytes, at most maxHeaderPayloadBytes
//	payload  five fields, each a u16 length and its bytes, in the order
//	         source, dataset, snapshot, GUID, token
//
// A binary layout rather than JSON: the decoder accepts exactly one encoding
// of each header (a fuzzed round trip proves it), and no field can smuggle in
// anything a JSON decoder would quietly accept (duplicate keys, unknown keys).
const (
	headerMagic           = "BATONSHP"
	protocolVersion       = 1
	headerPrefixBytes     = len(headerMagic) + 1 + 2
	maxHeaderPayloadBytes = 4 << 10
)

// headerField is one field of the payload and its limit. Names must be
// printable text; the token is opaque bytes and never appears in an error.
type headerField struct {
	name     string
	maxBytes int
	text     bool // printable UTF-8 without control characters
	required bool
}

var headerFields = [...]headerField{
	{name: "source", maxBytes: 64, text: true, required: true},
	{name: "dataset", maxBytes: 256, text: true, required: true},
	{name: "snapshot", maxBytes: 256, text: true, required: true},
	{name: "GUID", maxBytes: 64, text: true},
	{name: "token", maxBytes: 1024},
}

func headerValues(h agent.StreamHeader) [len(headerFields)]string {
	return [...]string{string(h.Source), h.Dataset, h.Snapshot, h.GUID, h.Token}
}

func headerFromValues(v [len(headerFields)]string) agent.StreamHeader {
	return agent.StreamHeader{Source: chain.ClusterID(v[0]), Dataset: v[1], Snapshot: v[2], GUID: v[3], Token: v[4]}
}

// encodeHeader checks a header against the limits the decoder enforces and
// frames it; a header the receiver would refuse is refused here, before a
// connection is opened for it.
func encodeHeader(h agent.StreamHeader) ([]byte, error) {
	values := headerValues(h)
	payloadBytes := 0
	for i, f := range headerFields {
		if err := f.check(values[i]); err != nil {
			return nil, err
		}
		payloadBytes += 2 + len(values[i])
	}
	if payloadBytes > maxHeaderPayloadBytes {
		panic("stream: the field limits allow a header longer than the frame limit")
	}
	frame := make([]byte, 0, headerPrefixBytes+payloadBytes)
	frame = append(frame, headerMagic...)
	frame = append(frame, protocolVersion)
	frame = binary.BigEndian.AppendUint16(frame, uint16(payloadBytes))
	for _, v := range values {
		frame = binary.BigEndian.AppendUint16(frame, uint16(len(v)))
		frame = append(frame, v...)
	}
	return frame, nil
}

// readHeader reads one header frame. It reads no further than the frame
// declares, and allocates no more than maxHeaderPayloadBytes whatever the
// frame claims, so a hostile peer cannot make it buffer the body or balloon.
func readHeader(r io.Reader) (agent.StreamHeader, error) {
	prefix := make([]byte, headerPrefixBytes)
	if _, err := io.ReadFull(r, prefix); err != nil {
		return agent.StreamHeader{}, fmt.Errorf("%w: failed to read the header: %w", ErrProtocol, err)
	}
	if string(prefix[:len(headerMagic)]) != headerMagic {
		return agent.StreamHeader{}, fmt.Errorf("%w: not a baton stream (bad magic)", ErrProtocol)
	}
	if version := prefix[len(headerMagic)]; version != protocolVersion {
		return agent.StreamHeader{}, fmt.Errorf("%w: protocol version %d, this node speaks %d", ErrProtocol, version, protocolVersion)
	}
	payloadBytes := int(binary.BigEndian.Uint16(prefix[len(headerMagic)+1:]))
	if payloadBytes > maxHeaderPayloadBytes {
		return agent.StreamHeader{}, fmt.Errorf("%w: a header of %d bytes exceeds %d", ErrProtocol, payloadBytes, maxHeaderPayloadBytes)
	}
	payload := make([]byte, payloadBytes)
	if _, err := io.ReadFull(r, payload); err != nil {
		return agent.StreamHeader{}, fmt.Errorf("%w: failed to read the header: %w", ErrProtocol, err)
	}
	return parseHeaderPayload(payload)
}

// parseHeaderPayload splits the payload into its fields; every byte must
// belong to a field.
func parseHeaderPayload(payload []byte) (agent.StreamHeader, error) {
	var values [len(headerFields)]string
	rest := payload
	for i, f := range headerFields {
		if len(rest) < 2 {
			return agent.StreamHeader{}, fmt.Errorf("%w: the header ends before its %s", ErrProtocol, f.name)
		}
		n := int(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
		if n > len(rest) {
			return agent.StreamHeader{}, fmt.Errorf("%w: the header's %s runs past its end", ErrProtocol, f.name)
		}
		values[i], rest = string(rest[:n]), rest[n:]
		if err := f.check(values[i]); err != nil {
			return agent.StreamHeader{}, err
		}
	}
	if len(rest) != 0 {
		return agent.StreamHeader{}, fmt.Errorf("%w: %d bytes follow the header's last field", ErrProtocol, len(rest))
	}
	return headerFromValues(values), nil
}

// check enforces a field's limits. Its errors name the field and sizes, never
// the value: the value may be the token.
func (f headerField) check(value string) error {
	switch {
	case len(value) > f.maxBytes:
		return fmt.Errorf("%w: the header's %s has %d bytes, at most %d", ErrProtocol, f.name, len(value), f.maxBytes)
	case f.required && value == "":
		return fmt.Errorf("%w: the header's %s is empty", ErrProtocol, f.name)
	case f.text && !printable(value):
		return fmt.Errorf("%w: the header's %s is not printable text", ErrProtocol, f.name)
	}
	return nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
