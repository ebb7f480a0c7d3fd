package stream

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// A full stream and then an incremental one travel from A's pool to B's
// through both agents; B ends up with A's snapshots, GUIDs and bytes, and the
// incremental carries only the change.
func TestFullThenIncrementalStreamsLandOnTheOtherSite(t *testing.T) {
	s := newSites(t, nil)
	first := pattern(1<<20, 1)
	s.write(0, first)
	guid1 := s.snapshot("baton-000001")
	full, result := s.send(s.sendSpec("rep-1", "baton-000001", "", token))
	if full.err != nil || result.Error != "" {
		t.Fatalf("the full stream: %v (agent: %q)", full.err, result.Error)
	}

	second := pattern(8<<10, 2)
	s.write(4<<20, second)
	guid2 := s.snapshot("baton-000002")
	delta, result := s.send(s.sendSpec("rep-1", "baton-000002", "baton-000001", token))
	if delta.err != nil || result.Error != "" {
		t.Fatalf("the incremental stream: %v (agent: %q)", delta.err, result.Error)
	}

	snaps, err := s.poolB.Snapshots("rep-1")
	if err != nil || len(snaps) != 2 || snaps[0].GUID != guid1 || snaps[1].GUID != guid2 {
		t.Fatalf("rep-1 on B holds %+v (%v), want GUIDs %s and %s", snaps, err, guid1, guid2)
	}
	if !bytes.Equal(pooltest.Read(t, s.poolB, "rep-1", 0, len(first)), first) ||
		!bytes.Equal(pooltest.Read(t, s.poolB, "rep-1", 4<<20, len(second)), second) {
		t.Fatal("rep-1 on B does not hold what A wrote")
	}
	if full.bytes < uint64(len(first)) || delta.bytes >= full.bytes/10 {
		t.Fatalf("the full stream carried %d bytes, the incremental %d: the delta is not a delta", full.bytes, delta.bytes)
	}
	sent, received := s.client.Counters().Stats(), s.server.Counters().Stats()
	if sent.Bytes != full.bytes+delta.bytes || received.Bytes != sent.Bytes {
		t.Fatalf("bytes counted: sent %d, received %d; the streams carried %d", sent.Bytes, received.Bytes, full.bytes+delta.bytes)
	}
	if sent.Answers[KindOK] != 2 || received.Answers[KindOK] != 2 || sent.InFlight != 0 || received.InFlight != 0 {
		t.Fatalf("counters: sent %+v, received %+v", sent, received)
	}
	if sent.ThroughputBytesPerSecond() <= 0 {
		t.Fatal("no throughput measured")
	}
}

// Refusals reach the sending agent as the sentinels it acts on, and a stream
// never leaves the token in the receiver's log.
func TestRefusalsReachTheSenderAsTheirSentinels(t *testing.T) {
	tests := []struct {
		name    string
		arrange func(*sites) (dataset, base, presented string)
		want    error
		noBase  bool
	}{
		{"wrong token", func(*sites) (string, string, string) { return "rep-1", "", "not-" + token }, agent.ErrUnauthorized, false},
		{"no token", func(*sites) (string, string, string) { return "rep-1", "", "" }, agent.ErrUnauthorized, false},
		{"unknown replica", func(*sites) (string, string, string) { return "rep-9", "", token }, agent.ErrReplicaClosed, false},
		{"failed-over replica", func(s *sites) (string, string, string) {
			s.closeReplicas()
			return "rep-1", "", token
		}, agent.ErrReplicaClosed, false},
		{"no base", func(s *sites) (string, string, string) {
			s.openReplica("rep-2")
			return "rep-2", "baton-000001", token
		}, backend.ErrNoBase, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSites(t, nil)
			s.write(0, pattern(64<<10, 3))
			s.snapshot("baton-000001")
			s.snapshot("baton-000002")
			dataset, base, presented := tt.arrange(s)
			got, result := s.send(s.sendSpec(dataset, "baton-000002", base, presented))
			if !errors.Is(got.err, tt.want) {
				t.Fatalf("the sender got %v, want errors.Is %v", got.err, tt.want)
			}
			if result.Error == "" || result.NoBase != tt.noBase {
				t.Fatalf("the agent reports %+v, want a failure with NoBase %v", result, tt.noBase)
			}
			if vols, _ := s.poolB.Volumes(); len(vols) != 0 {
				t.Fatalf("B's pool took a refused stream: %+v", vols)
			}
			s.server.Close()
			logs := s.logs.String()
			if !strings.Contains(logs, "refused a stream") || strings.Contains(logs, token) {
				t.Fatalf("the receiver's log does not record the refusal, or quotes the token:\n%s", logs)
			}
		})
	}
}

// A sender that lost the answer ships the snapshot again: the receiver holds
// it and says ok without reading the body again.
func TestASnapshotHeldAlreadyIsAcknowledgedAgain(t *testing.T) {
	var reader *countingReceiver
	s := newSites(t, func(r Receiver) Receiver {
		reader = &countingReceiver{inner: r}
		return reader
	})
	s.write(0, pattern(2<<20, 4))
	s.snapshot("baton-000001")
	spec := s.sendSpec("rep-1", "baton-000001", "", token)
	if got, _ := s.send(spec); got.err != nil {
		t.Fatal(got.err)
	}
	read := reader.bytes.Load()
	if got, result := s.send(spec); got.err != nil || result.Error != "" {
		t.Fatalf("the repeated stream: %v (agent: %q)", got.err, result.Error)
	}
	if again := reader.bytes.Load(); again != read {
		t.Fatalf("the receiving agent read %d bytes of a snapshot it held", again-read)
	}
	if snaps, _ := s.poolB.Snapshots("rep-1"); len(snaps) != 1 {
		t.Fatalf("rep-1 holds %d snapshots, want 1", len(snaps))
	}
}

// countingReceiver counts the bytes the receiving agent reads.
type countingReceiver struct {
	inner Receiver
	bytes atomic.Int64
}

func (c *countingReceiver) Receive(h agent.StreamHeader, r io.Reader) error {
	return c.inner.Receive(h, readerFunc(func(p []byte) (int, error) {
		n, err := r.Read(p)
		c.bytes.Add(int64(n))
		return n, err
	}))
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
