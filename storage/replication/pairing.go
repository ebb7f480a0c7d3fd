package replication

import (
	"errors"
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/chain"
)

// Phase is where a pairing is in its cycle.
type Phase uint8

const (
	// Idle: waiting until the next snapshot is due.
	Idle Phase = iota + 1
	// Snapshotting: a snapshot has been ordered on the source.
	Snapshotting
	// Shipping: a snapshot is taken and its stream is owed to the target.
	Shipping
	// Paused: no snapshots are taken (disabled, or the source was reaped).
	Paused
)

func (p Phase) String() string {
	switch p {
	case Idle:
		return "Idle"
	case Snapshotting:
		return "Snapshotting"
	case Shipping:
		return "Shipping"
	case Paused:
		return "Paused"
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// MinRetention is the fewest snapshots a pairing keeps: the base of the next
// delta and the one being shipped.
const MinRetention = 2

// Snapshot is one snapshot of the source taken for this pairing.
type Snapshot struct {
	Name string
	GUID string // set once taken; identifies the content on every pool
	// OrderedAt is when the pairing ordered it; the node takes it at or
	// after that time, and the site learns of it only when the node's report
	// arrives, which may be much later (the report failed, the node was cut
	// off from its operator).
	OrderedAt time.Time
	// TakenAt is the snapshot's recovery point, zero until taken: it holds
	// every write acknowledged before then. It is OrderedAt -- the one time
	// the site knows to precede the snapshot -- never the report's arrival,
	// which would count writes the snapshot may not hold (a final sync judged
	// by a snapshot taken before the fence).
	TakenAt   time.Time
	ShippedAt time.Time // zero until the target is known to hold it
}

// Taken reports whether the snapshot exists on the source.
func (s Snapshot) Taken() bool { return s.GUID != "" }

// Shipped reports whether the target holds the snapshot.
func (s Snapshot) Shipped() bool { return !s.ShippedAt.IsZero() }

// Base is what the next stream is incremental from.
type Base struct {
	// Volume is empty for the source itself, or the origin the source was
	// cloned from ("<dataset>") for a clone stream: a fail-over clone's first
	// delta back to the old site starts at the replica snapshot it was cloned
	// from, which that site holds under the same GUID.
	Volume   string
	Snapshot string // empty: a full stream
	GUID     string
}

// IsFull reports whether the next stream must carry everything.
func (b Base) IsFull() bool { return b.Snapshot == "" }

// Sync describes the last completed shipment.
type Sync struct {
	At       time.Time
	Duration time.Duration
	Bytes    uint64
	Snapshot string
}

// Pairing is one replication relationship, source member → target cluster.
type Pairing struct {
	Source    chain.Ref
	Target    chain.ClusterID
	Interval  time.Duration
	Retention int

	Phase     Phase
	Sequence  uint64     // the number of the last snapshot ordered
	Snapshots []Snapshot // oldest first
	Base      Base
	Due       time.Time // when the next snapshot is due
	RetryAt   time.Time // when a failed shipment is retried
	Last      Sync

	Failures  int    // consecutive failed shipments
	LastError string // the last failure, for status
}

// Errors of New.
var ErrInvalidPairing = errors.New("invalid pairing")

// New returns an enabled pairing whose first snapshot is due at once. base is
// the first stream's base: empty for a full copy.
func New(source chain.Ref, target chain.ClusterID, interval time.Duration, retention int, base Base, now time.Time) (*Pairing, error) {
	switch {
	case source.IsZero() || target == "":
		return nil, fmt.Errorf("%w: source %q and target %q must be set", ErrInvalidPairing, source, target)
	case source.Cluster == target:
		return nil, fmt.Errorf("%w: %s cannot replicate to its own cluster", ErrInvalidPairing, source)
	case interval <= 0:
		return nil, fmt.Errorf("%w: interval %s must be positive", ErrInvalidPairing, interval)
	case retention < MinRetention:
		return nil, fmt.Errorf("%w: retention %d is below %d", ErrInvalidPairing, retention, MinRetention)
	}
	return &Pairing{Source: source, Target: target, Interval: interval, Retention: retention,
		Phase: Idle, Base: base, Due: now}, nil
}
