package stream

import (
	"sync/atomic"
	"time"
)

// Counters are one end's running totals, safe to read while streams run: a
// Prometheus collector reads them with Stats on every scrape. The client
// counts the body bytes it wrote, the server those its agent read.
type Counters struct {
	streams       atomic.Uint64
	inFlight      atomic.Int64
	bytes         atomic.Uint64
	finishedBytes atomic.Uint64
	busyNanos     atomic.Uint64
	byKind        [kindCount]atomic.Uint64
	transportErrs atomic.Uint64
}

// Stats is a reading of Counters.
type Stats struct {
	// Streams counts the streams begun; InFlight those not yet finished.
	Streams  uint64
	InFlight int64
	// Bytes counts body bytes carried, by finished and running streams (on
	// a server, the discarded rest of an early-answered body included): the
	// counter a rate is taken of.
	Bytes uint64
	// FinishedBytes and Busy sum the bytes and the durations of finished
	// streams: their ratio is the mean throughput while streams ran
	// (ThroughputBytesPerSecond).
	FinishedBytes uint64
	Busy          time.Duration
	// Answers counts finished streams by the receiver's answer, indexed by Kind.
	Answers [kindCount]uint64
	// TransportErrors counts streams that ended without an answer: the peer
	// unreachable, the handshake refused, the connection cut.
	TransportErrors uint64
}

// Stats reads the counters. Each field is read atomically; the fields
// together are not one instant, which a scrape does not need.
func (c *Counters) Stats() Stats {
	s := Stats{
		Streams:         c.streams.Load(),
		InFlight:        c.inFlight.Load(),
		Bytes:           c.bytes.Load(),
		FinishedBytes:   c.finishedBytes.Load(),
		Busy:            time.Duration(c.busyNanos.Load()),
		TransportErrors: c.transportErrs.Load(),
	}
	for k := range s.Answers {
		s.Answers[k] = c.byKind[k].Load()
	}
	return s
}

// ThroughputBytesPerSecond is the mean rate at which finished streams moved
// their bytes; zero before any finished.
func (s Stats) ThroughputBytesPerSecond() float64 {
	if s.Busy <= 0 {
		return 0
	}
	return float64(s.FinishedBytes) / s.Busy.Seconds()
}

func (c *Counters) begin() time.Time {
	c.streams.Add(1)
	c.inFlight.Add(1)
	return time.Now()
}

func (c *Counters) addBytes(n int) { c.bytes.Add(uint64(n)) }

// finish records a stream's end: its answer, or no answer at all.
func (c *Counters) finish(started time.Time, bytes uint64, kind Kind, answered bool) {
	if kind >= kindCount {
		panic("stream: counting an answer of a kind that does not exist")
	}
	if answered {
		c.byKind[kind].Add(1)
	} else {
		c.transportErrs.Add(1)
	}
	c.finishedBytes.Add(bytes)
	c.busyNanos.Add(uint64(max(time.Since(started), 0)))
	if c.inFlight.Add(-1) < 0 {
		panic("stream: more streams finished than began")
	}
}
