package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
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

// done adapts a call without a result.
func done(err error) (struct{}, error) { return struct{}{}, err }

func (a api) ID() chain.ClusterID { return a.target.Cluster }

func (a api) CreateVolume(ctx context.Context, r core.CreateRequest) (core.Volume, error) {
	return call(a, "CreateVolume", func(l *storageapi.Local) (core.Volume, error) { return l.CreateVolume(ctx, r) })
}

func (a api) DeleteVolume(ctx context.Context, ref chain.Ref) error {
	_, err := call(a, "DeleteVolume", func(l *storageapi.Local) (struct{}, error) { return done(l.DeleteVolume(ctx, ref)) })
	return err
}

func (a api) ExpandVolume(ctx context.Context, ref chain.Ref, size uint64) (core.Volume, error) {
	return call(a, "ExpandVolume", func(l *storageapi.Local) (core.Volume, error) { return l.ExpandVolume(ctx, ref, size) })
}

func (a api) Volume(ctx context.Context, ref chain.Ref) (core.Volume, error) {
	return call(a, "Volume", func(l *storageapi.Local) (core.Volume, error) { return l.Volume(ctx, ref) })
}

func (a api) CreateVolumeFrom(ctx context.Context, r core.CreateRequest, source core.CloneSource) (core.Volume, error) {
	return call(a, "CreateVolumeFrom", func(l *storageapi.Local) (core.Volume, error) { return l.CreateVolumeFrom(ctx, r, source) })
}

func (a api) Attach(ctx context.Context, member chain.Ref, node string) (core.Volume, error) {
	return call(a, "Attach", func(l *storageapi.Local) (core.Volume, error) { return l.Attach(ctx, member, node) })
}

func (a api) RecordFilesystem(ctx context.Context, member chain.Ref, fsType string) error {
	_, err := call(a, "RecordFilesystem", func(l *storageapi.Local) (struct{}, error) { return done(l.RecordFilesystem(ctx, member, fsType)) })
	return err
}

func (a api) Capacity(ctx context.Context, placeCount int) (uint64, error) {
	return call(a, "Capacity", func(l *storageapi.Local) (uint64, error) { return l.Capacity(ctx, placeCount) })
}

func (a api) CreateSnapshot(ctx context.Context, member chain.Ref, name string) (core.Snapshot, error) {
	return call(a, "CreateSnapshot", func(l *storageapi.Local) (core.Snapshot, error) { return l.CreateSnapshot(ctx, member, name) })
}

func (a api) DeleteSnapshot(ctx context.Context, ref core.SnapshotRef) error {
	_, err := call(a, "DeleteSnapshot", func(l *storageapi.Local) (struct{}, error) { return done(l.DeleteSnapshot(ctx, ref)) })
	return err
}

func (a api) ListSnapshots(ctx context.Context) ([]core.Snapshot, error) {
	return call(a, "ListSnapshots", func(l *storageapi.Local) ([]core.Snapshot, error) { return l.ListSnapshots(ctx) })
}

func (a api) Members(ctx context.Context, root chain.Ref) ([]chain.Member, error) {
	return call(a, "Members", func(l *storageapi.Local) ([]chain.Member, error) { return l.Members(ctx, root) })
}

func (a api) Holdings(ctx context.Context, root chain.Ref) ([]string, error) {
	return call(a, "Holdings", func(l *storageapi.Local) ([]string, error) { return l.Holdings(ctx, root) })
}

func (a api) Enable(ctx context.Context, member chain.Ref, target chain.ClusterID) error {
	_, err := call(a, "Enable", func(l *storageapi.Local) (struct{}, error) { return done(l.Enable(ctx, member, target)) })
	return err
}

func (a api) Disable(ctx context.Context, member chain.Ref) error {
	_, err := call(a, "Disable", func(l *storageapi.Local) (struct{}, error) { return done(l.Disable(ctx, member)) })
	return err
}

func (a api) Failover(ctx context.Context, source chain.Ref, force bool) (core.Volume, error) {
	return call(a, "Failover", func(l *storageapi.Local) (core.Volume, error) { return l.Failover(ctx, source, force) })
}

func (a api) Demote(ctx context.Context, member chain.Ref) error {
	_, err := call(a, "Demote", func(l *storageapi.Local) (struct{}, error) { return done(l.Demote(ctx, member)) })
	return err
}

func (a api) Resync(ctx context.Context, end chain.Ref, source chain.ClusterID) (bool, error) {
	return call(a, "Resync", func(l *storageapi.Local) (bool, error) { return l.Resync(ctx, end, source) })
}

func (a api) Status(ctx context.Context, member chain.Ref) (core.Status, error) {
	return call(a, "Status", func(l *storageapi.Local) (core.Status, error) { return l.Status(ctx, member) })
}

func (a api) Handover(ctx context.Context, member chain.Ref) (core.Handover, error) {
	return call(a, "Handover", func(l *storageapi.Local) (core.Handover, error) { return l.Handover(ctx, member) })
}

func (a api) LearnSuccessor(ctx context.Context, member, successor chain.Ref) error {
	_, err := call(a, "LearnSuccessor", func(l *storageapi.Local) (struct{}, error) { return done(l.LearnSuccessor(ctx, member, successor)) })
	return err
}

func (a api) PrepareReceive(ctx context.Context, r core.ReceiveRequest) ([]core.Receiver, error) {
	return call(a, "PrepareReceive", func(l *storageapi.Local) ([]core.Receiver, error) { return l.PrepareReceive(ctx, r) })
}

func (a api) Spec(ctx context.Context, node string) (core.NodeSpec, error) {
	return call(a, "Spec", func(l *storageapi.Local) (core.NodeSpec, error) { return l.Spec(ctx, node) })
}

func (a api) Report(ctx context.Context, status core.NodeStatus) error {
	_, err := call(a, "Report", func(l *storageapi.Local) (struct{}, error) { return done(l.Report(ctx, status)) })
	return err
}
