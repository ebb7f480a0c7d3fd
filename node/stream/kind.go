package stream

import (
	"errors"

	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/storage/backend"
)

// Kind is what a receiver answers about a stream, machine-readable so the
// sender recovers the sentinel its agent acts on (a no-base answer makes the
// pairing fall back to a full stream).
type Kind uint8

const (
	// KindOK: the receiver holds the snapshot (received now, or already).
	KindOK Kind = iota
	// KindNoBase: an incremental stream's base is not on the receiver.
	KindNoBase
	// KindDiverged: the receiving volume was written since the base.
	KindDiverged
	// KindExists: a full stream into a volume that exists.
	KindExists
	// KindUnauthorized: the stream did not present the replica's token.
	KindUnauthorized
	// KindClosed: the receiving node does not take streams for that replica.
	KindClosed
	// KindInvalid: the stream or its header is malformed (a truncated body
	// included).
	KindInvalid
	// KindPoolFull: the receiving pool has no room for the stream.
	KindPoolFull
	// KindBusy: the receiver takes no more concurrent streams right now.
	KindBusy
	// KindOther: any other failure; the message says what.
	KindOther
	kindCount
)

func (k Kind) String() string {
	switch k {
	case KindOK:
		return "ok"
	case KindNoBase:
		return "no-base"
	case KindDiverged:
		return "diverged"
	case KindExists:
		return "exists"
	case KindUnauthorized:
		return "unauthorized"
	case KindClosed:
		return "closed"
	case KindInvalid:
		return "invalid"
	case KindPoolFull:
		return "pool-full"
	case KindBusy:
		return "busy"
	case KindOther:
		return "other"
	}
	return "Kind(?)"
}

// kindSentinels is the one table between kinds and sentinels, in the order
// classify tries them: the agent's refusals first, as they come before any
// pool is touched.
var kindSentinels = [...]struct {
	kind     Kind
	sentinel error
}{
	{KindUnauthorized, agent.ErrUnauthorized},
	{KindClosed, agent.ErrReplicaClosed},
	{KindNoBase, backend.ErrNoBase},
	{KindDiverged, backend.ErrDiverged},
	{KindExists, backend.ErrExists},
	{KindPoolFull, backend.ErrPoolFull},
	{KindInvalid, backend.ErrInvalid},
	{KindInvalid, ErrProtocol},
	{KindBusy, ErrBusy},
}

// classify finds the kind of a receiver's outcome.
func classify(err error) Kind {
	if err == nil {
		return KindOK
	}
	for _, row := range kindSentinels {
		if errors.Is(err, row.sentinel) {
			return row.kind
		}
	}
	return KindOther
}

// sentinel is the error a kind stands for on the sending side: the first row
// of the table with the kind. KindOK and KindOther have none.
func (k Kind) sentinel() error {
	for _, row := range kindSentinels {
		if row.kind == k {
			return row.sentinel
		}
	}
	return nil
}
