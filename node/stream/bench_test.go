package stream

import (
	"io"
	"testing"

	"github.com/baton-dr/baton/node/agent"
	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
)

// repeating reads as a 1 MiB pattern over and over: a source that costs
// next to nothing, so the benchmark measures the transport.
type repeating struct {
	pattern []byte
	at      int
}

func (r *repeating) Read(p []byte) (int, error) {
	n := copy(p, r.pattern[r.at:])
	r.at = (r.at + n) % len(r.pattern)
	return n, nil
}

// BenchmarkShip256MiB ships a 256 MiB stream over TLS on loopback to a
// receiver that reads it through: the transport's throughput, in MB/s.
func BenchmarkShip256MiB(b *testing.B) {
	const streamBytes = 256 << 20
	ca := newAuthority(b, "ca")
	_, address := serve(b, ca.issue(b, "b-n1", loopback), &discard{}, ServerOptions{}, "")
	client := newClient(b, ca, ClientOptions{})
	to := core.Receiver{Node: "b-n1", Address: address, Token: token}
	source := &repeating{pattern: pattern(1<<20, 9)}
	b.SetBytes(streamBytes)
	for b.Loop() {
		got := ship(b, client, to, sampleHeader(), io.NopCloser(io.LimitReader(source, streamBytes)))
		if got.err != nil || got.bytes != streamBytes {
			b.Fatalf("shipped %d bytes: %v", got.bytes, got.err)
		}
	}
}

// BenchmarkShipSimPool64MiB ships a full stream of a volume holding 64 MiB
// from one simulated pool to another through the receiving agent: the
// transport with the sim's stream encoding and decoding around it.
func BenchmarkShipSimPool64MiB(b *testing.B) {
	const volumeBytes = 64 << 20
	ca := newAuthority(b, "ca")
	poolA := simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 1})
	if err := poolA.CreateVolume("vol-1", volumeBytes, backend.Thin); err != nil {
		b.Fatal(err)
	}
	d, _ := poolA.Open("vol-1")
	d.WriteAt(pattern(volumeBytes, 7), 0)
	d.Close()
	if err := poolA.Snapshot("vol-1", "s1"); err != nil {
		b.Fatal(err)
	}
	var poolB *simzfs.Pool
	receiver := receiverFunc(func(h agent.StreamHeader, r io.Reader) error { return poolB.Receive(h.Dataset, r) })
	_, address := serve(b, ca.issue(b, "b-n1", loopback), receiver, ServerOptions{}, "")
	client := newClient(b, ca, ClientOptions{})
	to := core.Receiver{Node: "b-n1", Address: address, Token: token}
	b.SetBytes(volumeBytes)
	for b.Loop() {
		b.StopTimer()
		poolB = simzfs.New(simzfs.Options{SizeBytes: 1 << 30, Seed: 2})
		stream, err := poolA.Send("vol-1", "", "s1")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if got := ship(b, client, to, sampleHeader(), stream); got.err != nil {
			b.Fatal(got.err)
		}
	}
}

type receiverFunc func(agent.StreamHeader, io.Reader) error

func (f receiverFunc) Receive(h agent.StreamHeader, r io.Reader) error { return f(h, r) }
