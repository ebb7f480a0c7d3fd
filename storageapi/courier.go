package storageapi

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Courier is how a site's shell reaches its peers (Local).
//
// Ask puts a question an operation cannot decide without (core.Effects.Ask)
// while the operation holds no lock; it answers within the shell's question
// budget, so that an unreachable peer costs the caller that budget and not
// the caller's whole deadline.
//
// Send carries a request the site makes once an operation's records are
// written (core.Effects.Requests: a successor to announce, a pairing's
// receivers to ask for) and hands its answer -- or the error that took its
// place -- to answered exactly once, which feeds it back into the core. No
// caller waits for it: a request that failed is sent again by the next tick.
type Courier interface {
	Ask(ctx context.Context, peers core.Peers, question core.Question) core.Told
	Send(peers core.Peers, request core.Request, answered func(core.Answer))
}

// InlineCourier asks and sends at once, on the caller's goroutine, after the
// operation released its locks: for tests and embedders whose peers answer
// at once. A caller whose peer may be cut off waits as long as its peers'
// calls do; the operator uses GoCourier.
type InlineCourier struct{}

func (InlineCourier) Ask(_ context.Context, peers core.Peers, q core.Question) core.Told {
	return core.Ask(peers, q)
}

func (InlineCourier) Send(peers core.Peers, request core.Request, answered func(core.Answer)) {
	answered(core.Deliver(peers, request))
}

// DefaultQuestionTimeout is how long GoCourier waits for a peer's answer to
// a question: a quarter of a call's deadline, so that the call that asked
// still answers within its own.
const DefaultQuestionTimeout = DefaultCallTimeout / 4

// goCourierInFlight bounds the calls GoCourier has in flight: past it a
// request is answered at once with ErrCourierBusy (the next tick sends it
// again), and a question likewise.
const goCourierInFlight = 64

// ErrCourierBusy answers a request or a question GoCourier had no room for.
var ErrCourierBusy = fmt.Errorf("%w: too many calls to peers in flight", chain.ErrUnreachable)

// GoCourier makes each call on a goroutine of its own, through peers that
// bound every call (Peers' CallTimeout): a request's caller gets its answer
// at once, a question's waits at most QuestionTimeout.
type GoCourier struct {
	slots chan struct{}
	// QuestionTimeout bounds the wait for a question's answer; zero is
	// DefaultQuestionTimeout.
	QuestionTimeout time.Duration
}

// NewGoCourier returns a courier with nothing in flight.
func NewGoCourier(questionTimeout time.Duration) *GoCourier {
	if questionTimeout <= 0 {
		questionTimeout = DefaultQuestionTimeout
	}
	return &GoCourier{slots: make(chan struct{}, goCourierInFlight), QuestionTimeout: questionTimeout}
}

// spawn runs f on a goroutine holding a slot; false when none was free.
func (c *GoCourier) spawn(f func()) bool {
	select {
	case c.slots <- struct{}{}:
	default:
		return false
	}
	go func() {
		defer func() { <-c.slots }()
		f()
	}()
	return true
}

func (c *GoCourier) Ask(ctx context.Context, peers core.Peers, q core.Question) core.Told {
	told := make(chan core.Told, 1)
	if !c.spawn(func() { told <- core.Ask(peers, q) }) {
		return core.Told{Question: q, Err: ErrCourierBusy}
	}
	timer := time.NewTimer(c.QuestionTimeout)
	defer timer.Stop()
	select {
	case t := <-told:
		return t
	case <-timer.C:
		return core.Told{Question: q, Err: fmt.Errorf("%w: %s got no answer within %s", chain.ErrUnreachable, q, c.QuestionTimeout)}
	case <-ctx.Done():
		return core.Told{Question: q, Err: fmt.Errorf("%w: %s: %w", chain.ErrUnreachable, q, ctx.Err())}
	}
}

func (c *GoCourier) Send(peers core.Peers, request core.Request, answered func(core.Answer)) {
	if !c.spawn(func() { answered(core.Deliver(peers, request)) }) {
		answered(core.Answer{Request: request, Err: ErrCourierBusy})
	}
}
