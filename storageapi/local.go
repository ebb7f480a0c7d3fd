package storageapi

import (
	"context"
	"sync"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Local is the Cluster of the site this process runs: the control plane itself,
// served by Server and called directly by the simulation.
//
// Every call takes one mutex. core.Site is not safe for concurrent use, and its
// operations read and write several records (a fail-over writes a volume, a
// replica and a pairing), so serialising whole calls keeps each one atomic
// without a transaction in the store. The finer lock is per chain root, taken
// for the records of one chain, with the site-wide allocation (ports, minors,
// capacity) under its own lock -- worth it once contention shows. Calls that
// ask a peer site hold the mutex while they wait; two sites asking each other
// at once wait for the client's per-call deadline, after which the peer counts
// as unreachable and the work is retried by Tick.
type Local struct {
	acquire Acquire
	id      func() chain.ClusterID
}

// Acquire hands out the site under the lock that serialises its calls, with
// the function that releases it; an error when there is no site to serve yet
// (an operator that has not loaded its StorageCluster).
type Acquire func(ctx context.Context) (s *core.Site, release func(), err error)

// NewLocal serves s under a mutex of its own.
func NewLocal(s *core.Site) *Local {
	var mu sync.Mutex
	return &Local{
		acquire: func(context.Context) (*core.Site, func(), error) {
			mu.Lock()
			return s, mu.Unlock, nil
		},
		id: s.Cluster,
	}
}

// NewLocalWith serves the site acquire hands out: the operator's, under the
// operator's own mutex. id names the cluster while there is no site yet.
func NewLocalWith(acquire Acquire, id func() chain.ClusterID) *Local {
	return &Local{acquire: acquire, id: id}
}

var _ Cluster = (*Local)(nil)

func (l *Local) ID() chain.ClusterID { return l.id() }

func (l *Local) CreateVolume(ctx context.Context, request core.CreateRequest) (core.Volume, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Volume
		return zero, err
	}
	defer release()
	return s.CreateVolume(request)
}

func (l *Local) CreateVolumeFrom(ctx context.Context, request core.CreateRequest, source core.CloneSource) (core.Volume, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Volume
		return zero, err
	}
	defer release()
	return s.CreateVolumeFrom(request, source)
}

func (l *Local) DeleteVolume(ctx context.Context, ref chain.Ref) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.DeleteVolume(ref)
}

func (l *Local) ExpandVolume(ctx context.Context, ref chain.Ref, sizeBytes uint64) (core.Volume, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Volume
		return zero, err
	}
	defer release()
	return s.ExpandVolume(ref, sizeBytes)
}

func (l *Local) Volume(ctx context.Context, ref chain.Ref) (core.Volume, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Volume
		return zero, err
	}
	defer release()
	return s.Volume(ref)
}

func (l *Local) Attach(ctx context.Context, member chain.Ref, node string) (core.Volume, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Volume
		return zero, err
	}
	defer release()
	return s.Attach(member, node)
}

func (l *Local) RecordFilesystem(ctx context.Context, member chain.Ref, fsType string) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.RecordFilesystem(member, fsType)
}

func (l *Local) Capacity(ctx context.Context, placeCount int) (uint64, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero uint64
		return zero, err
	}
	defer release()
	return s.Capacity(placeCount)
}

func (l *Local) CreateSnapshot(ctx context.Context, member chain.Ref, name string) (core.Snapshot, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Snapshot
		return zero, err
	}
	defer release()
	return s.CreateSnapshot(member, name)
}

func (l *Local) DeleteSnapshot(ctx context.Context, ref core.SnapshotRef) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.DeleteSnapshot(ref)
}

func (l *Local) ListSnapshots(ctx context.Context) ([]core.Snapshot, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero []core.Snapshot
		return zero, err
	}
	defer release()
	return s.ListSnapshots()
}

func (l *Local) Members(ctx context.Context, root chain.Ref) ([]chain.Member, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero []chain.Member
		return zero, err
	}
	defer release()
	return s.Members(root)
}

func (l *Local) Holdings(ctx context.Context, root chain.Ref) ([]string, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero []string
		return zero, err
	}
	defer release()
	return s.Holdings(root)
}

func (l *Local) Enable(ctx context.Context, member chain.Ref, target chain.ClusterID) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = s.Enable(member, target)
	return err
}

func (l *Local) Disable(ctx context.Context, member chain.Ref) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.Disable(member)
}

func (l *Local) Failover(ctx context.Context, source chain.Ref, force bool) (core.Volume, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Volume
		return zero, err
	}
	defer release()
	return s.Failover(source, force)
}

func (l *Local) Demote(ctx context.Context, member chain.Ref) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = s.Demote(member)
	return err
}

func (l *Local) Resync(ctx context.Context, end chain.Ref, failbackSource chain.ClusterID) (bool, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero bool
		return zero, err
	}
	defer release()
	return s.Resync(end, failbackSource)
}

func (l *Local) Status(ctx context.Context, member chain.Ref) (core.Status, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Status
		return zero, err
	}
	defer release()
	return s.Status(member)
}

func (l *Local) Handover(ctx context.Context, member chain.Ref) (core.Handover, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.Handover
		return zero, err
	}
	defer release()
	return s.Handover(member)
}

func (l *Local) LearnSuccessor(ctx context.Context, member, successor chain.Ref) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.LearnSuccessor(member, successor)
}

func (l *Local) PrepareReceive(ctx context.Context, request core.ReceiveRequest) ([]core.Receiver, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero []core.Receiver
		return zero, err
	}
	defer release()
	return s.PrepareReceive(request)
}

func (l *Local) Spec(ctx context.Context, node string) (core.NodeSpec, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		var zero core.NodeSpec
		return zero, err
	}
	defer release()
	return s.Spec(node)
}

func (l *Local) Report(ctx context.Context, status core.NodeStatus) error {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.Report(status)
}

// Tick runs the site's time-driven work under the same lock as the API.
func (l *Local) Tick() error {
	s, release, err := l.acquire(context.Background())
	if err != nil {
		return err
	}
	defer release()
	return s.Tick()
}
