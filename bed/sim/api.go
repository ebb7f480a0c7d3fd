package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// api is a site's storage API as seen from one endpoint across the simulated
// network: every call reaches the site's operator (storageapi.Local, the same
// code the operator serves over HTTPS) only while both directions of the path
// are open and the operator runs; otherwise it fails with chain.ErrUnreachable,
// as the HTTPS client does. A call takes simulated time (calls.go): its round
// trip and whatever the operator's handling took, or the client's whole
// deadline when a partition or a loss left it without an answer; one that
// took longer than the deadline fails, though the operator acted on it.
type api struct {
	from   string
	target *Site
	// timeout is the client's deadline of each call; zero is callTimeout.
	timeout time.Duration
}

func (a api) deadline() time.Duration {
	if a.timeout > 0 {
		return a.timeout
	}
	return callTimeout
}

var _ storageapi.Cluster = api{}

// callTimeout is the storage API client's deadline of each call.
const callTimeout = storageapi.DefaultCallTimeout

// call runs f on the target's API once the network lets the call through,
// unless the target's APIs fail it (FailAPI): before f runs, or after -- the
// call took effect and its answer was lost.
func call[T any](a api, operation string, f func(*storageapi.Local) (T, error)) (T, error) {
	w := a.target.world
	at := w.passTime()
	start := w.clockNow()
	result, err := serve(a, operation, f)
	took := w.clockNow() - start
	if deadline := a.deadline(); err == nil && took > deadline {
		w.calls.elapsed = start + deadline
		took = deadline
		var zero T
		result, err = zero, fmt.Errorf("%s -> %s %s: %w: context deadline exceeded after %s", a.from,
			a.target.Operator(), operation, chain.ErrUnreachable, deadline)
		w.Sim.Logf("api-timeout", "%s", err)
	}
	w.recordCall(Call{From: a.from, To: a.target.Operator(), Operation: operation, At: at, Took: took, Err: err})
	return result, err
}

// serve carries one call there and back, adding its time to the pass.
func serve[T any](a api, operation string, f func(*storageapi.Local) (T, error)) (T, error) {
	var zero T
	w := a.target.world
	start := w.clockNow()
	x := w.Net.CallWithin(a.from, a.target.Operator(), a.deadline())
	if !x.Arrived {
		w.wait(x.Waited)
		return zero, fmt.Errorf("%s -> %s: %w: %w", a.from, a.target.Operator(), chain.ErrUnreachable, x.Err)
	}
	w.wait(x.Request)
	if !a.target.ControllerUp {
		w.wait(x.Response)
		return zero, fmt.Errorf("%s -> %s: operator down: %w", a.from, a.target.Operator(), chain.ErrUnreachable)
	}
	failed, faulted := w.storageAPIFailure(a.target, operation)
	var result T
	var err error
	if !faulted || failed.after {
		result, err = f(a.target.API)
	}
	if x.Err != nil { // the answer was lost: the caller waited its whole deadline
		w.calls.elapsed = start + x.Waited
		return zero, fmt.Errorf("%s -> %s: %w: %w", a.from, a.target.Operator(), chain.ErrUnreachable, x.Err)
	}
	w.wait(x.Response)
	if faulted {
		w.Sim.Logf("api-error", "%s -> %s %s: %v", a.from, a.target.Operator(), operation, failed.err)
		return zero, failed.err
	}
	return result, err
}

func (a api) ID() chain.ClusterID { return a.target.Cluster }

// Carry makes op on the target's Local, as a call of the network.
func (a api) Carry(ctx context.Context, op storageapi.Operation, request any) (any, error) {
	return call(a, op.Name(request), func(l *storageapi.Local) (any, error) { return l.Carry(ctx, op, request) })
}
