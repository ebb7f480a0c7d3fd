package stream

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The answer frame the receiver writes once, when its agent has decided:
//
//	tag      1 byte 'A'
//	kind     u8 (Kind); a kind this node does not know reads as KindOther,
//	         so a newer receiver's answers still fail the stream
//	length   u16: the message's bytes, at most maxMessageBytes
//	message  the receiver's words, UTF-8, the token redacted
const (
	answerTag         = 'A'
	answerPrefixBytes = 4
	maxMessageBytes   = 1 << 10
)

// answer is a receiver's verdict on one stream.
type answer struct {
	kind    Kind
	message string
}

// err is the verdict as the sending side reports it.
func (a answer) err() error {
	if a.kind == KindOK {
		return nil
	}
	return &RemoteError{Kind: a.kind, Message: a.message}
}

// encodeAnswer frames an answer, cutting a long message at a rune boundary.
func encodeAnswer(a answer) []byte {
	if a.kind >= kindCount {
		panic(fmt.Sprintf("stream: answering with kind %d, which does not exist", a.kind))
	}
	message := strings.ToValidUTF8(a.message, "?")
	if len(message) > maxMessageBytes {
		cut := maxMessageBytes
		for !utf8.RuneStart(message[cut]) {
			cut-- // bounded: a rune is at most utf8.UTFMax bytes
		}
		message = message[:cut]
	}
	frame := make([]byte, 0, answerPrefixBytes+len(message))
	frame = append(frame, answerTag, byte(a.kind))
	frame = binary.BigEndian.AppendUint16(frame, uint16(len(message)))
	return append(frame, message...)
}

// readAnswer reads one answer frame.
func readAnswer(r io.Reader) (answer, error) {
	prefix := make([]byte, answerPrefixBytes)
	if _, err := io.ReadFull(r, prefix); err != nil {
		return answer{}, err
	}
	if prefix[0] != answerTag {
		return answer{}, fmt.Errorf("%w: not an answer frame (tag %#x)", ErrProtocol, prefix[0])
	}
	kind := Kind(prefix[1])
	if kind >= kindCount {
		kind = KindOther
	}
	messageBytes := int(binary.BigEndian.Uint16(prefix[2:]))
	if messageBytes > maxMessageBytes {
		return answer{}, fmt.Errorf("%w: an answer of %d bytes exceeds %d", ErrProtocol, messageBytes, maxMessageBytes)
	}
	message := make([]byte, messageBytes)
	if _, err := io.ReadFull(r, message); err != nil {
		return answer{}, fmt.Errorf("%w: failed to read the answer: %w", ErrProtocol, err)
	}
	if !utf8.Valid(message) {
		return answer{}, fmt.Errorf("%w: the answer's message is not UTF-8", ErrProtocol)
	}
	return answer{kind: kind, message: string(message)}, nil
}
