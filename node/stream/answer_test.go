package stream

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/storage/backend"
)

// Every refusal the receiving agent can return reaches the sender as the same
// sentinel: the agent's pairing acts on errors.Is, never on words.
func TestRefusalsCrossTheWireAsTheirSentinels(t *testing.T) {
	tests := []struct {
		refusal error
		kind    Kind
	}{
		{backend.Refusal(backend.ErrNoBase, "zfs", "cannot receive incremental stream: destination 'tank/rep-1' does not exist"), KindNoBase},
		{backend.Refusal(backend.ErrDiverged, "zfs", "destination has been modified"), KindDiverged},
		{backend.Refusal(backend.ErrExists, "zfs", "destination 'tank/rep-1' exists"), KindExists},
		{fmt.Errorf("%w: stream for rep-1 on n1 presents the wrong token", agent.ErrUnauthorized), KindUnauthorized},
		{fmt.Errorf("%w: rep-1 on n1", agent.ErrReplicaClosed), KindClosed},
		{backend.Refusal(backend.ErrInvalid, "zfs", "cannot receive: failed to read from stream"), KindInvalid},
		{backend.Refusal(backend.ErrPoolFull, "zfs", "out of space"), KindPoolFull},
		{fmt.Errorf("%w: at capacity", ErrBusy), KindBusy},
		{errors.New("the disk caught fire"), KindOther},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			kind := classify(tt.refusal)
			if kind != tt.kind {
				t.Fatalf("classified as %v, want %v", kind, tt.kind)
			}
			got, err := readAnswer(bytes.NewReader(encodeAnswer(answer{kind: kind, message: tt.refusal.Error()})))
			if err != nil {
				t.Fatal(err)
			}
			sent := got.err()
			var remote *RemoteError
			if !errors.As(sent, &remote) || remote.Message != tt.refusal.Error() {
				t.Fatalf("the sender got %v, want the receiver's words %q", sent, tt.refusal)
			}
			if want := tt.kind.sentinel(); want != nil && !errors.Is(sent, want) {
				t.Fatalf("errors.Is(%v, %v) does not hold on the sending side", sent, want)
			}
			if tt.kind == KindOther && errors.Unwrap(sent) != nil {
				t.Fatalf("an unclassified refusal unwraps to %v", errors.Unwrap(sent))
			}
		})
	}
	if got, _ := readAnswer(bytes.NewReader(encodeAnswer(answer{kind: classify(nil)}))); got.err() != nil {
		t.Fatalf("success crossed as %v", got.err())
	}
}

func TestEveryKindHasANameAndOnlyOkSucceeds(t *testing.T) {
	for k := range kindCount {
		if strings.Contains(k.String(), "?") {
			t.Errorf("kind %d has no name", k)
		}
		if (answer{kind: k}.err() == nil) != (k == KindOK) {
			t.Errorf("kind %v: success is %v", k, answer{kind: k}.err() == nil)
		}
	}
}

func TestLongMessagesAreCutAtARuneBoundary(t *testing.T) {
	message := strings.Repeat("é", maxMessageBytes) // two bytes a rune: the limit falls inside none or one
	for _, prefix := range []string{"", "x"} {
		got, err := readAnswer(bytes.NewReader(encodeAnswer(answer{kind: KindOther, message: prefix + message})))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.message) > maxMessageBytes || len(got.message) < maxMessageBytes-utf8.UTFMax || !utf8.ValidString(got.message) {
			t.Fatalf("a message of %d bytes, valid UTF-8 %v", len(got.message), utf8.ValidString(got.message))
		}
	}
}

// A kind from a newer receiver still fails the stream.
func TestAnUnknownKindReadsAsOther(t *testing.T) {
	frame := encodeAnswer(answer{kind: KindOther, message: "new"})
	frame[1] = 200
	got, err := readAnswer(bytes.NewReader(frame))
	if err != nil || got.kind != KindOther || got.err() == nil {
		t.Fatalf("read %+v, %v", got, err)
	}
}

// FuzzReadAnswer: arbitrary bytes never panic the sender's decoder, and an
// answer it accepts is one the encoder would write.
func FuzzReadAnswer(f *testing.F) {
	f.Add(encodeAnswer(answer{kind: KindOK}))
	f.Add(encodeAnswer(answer{kind: KindNoBase, message: "cannot receive incremental stream"}))
	f.Add([]byte{answerTag, 9, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		got, err := readAnswer(r)
		if err != nil {
			return
		}
		if got.kind >= kindCount || len(got.message) > maxMessageBytes || !utf8.ValidString(got.message) {
			t.Fatalf("accepted %+v", got)
		}
		consumed := data[:len(data)-r.Len()]
		if again := encodeAnswer(got); data[1] < byte(kindCount) && !bytes.Equal(again, consumed) {
			t.Fatalf("two encodings of one answer:\n%x\n%x", consumed, again)
		}
	})
}
