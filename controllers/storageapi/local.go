package storageapi

import (
	"context"
	"sync"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/site"
)

// Local is the Cluster of the site this process runs: the control plane itself,
// served by Server and called directly by the simulation.
//
// Every call takes one mutex. site.Site is not safe for concurrent use, and its
// operations read and write several records (a fail-over writes a volume, a
// replica and a pairing), so serialising whole calls keeps each one atomic
// without a transaction in the store. The finer lock is per chain root, taken
// for the records of one chain, with the site-wide allocation (ports, minors,
// capacity) under its own lock -- worth it once contention shows. Calls that
// ask a peer site hold the mutex while they wait; two sites asking each other
// at once wait for the client's per-call deadline, after which the peer counts
// as unreachable and the work is retried by Tick.
type Local struct {
	mu   sync.Mutex
	site *site.Site
}

// NewLocal serves s.
func NewLocal(s *site.Site) *Local { return &Local{site: s} }

var _ Cluster = (*Local)(nil)

func (l *Local) ID() chain.ClusterID { return l.site.Cluster() }

func (l *Local) CreateVolume(_ context.Context, request site.CreateRequest) (site.Volume, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.CreateVolume(request)
}

func (l *Local) CreateVolumeFrom(_ context.Context, request site.CreateRequest, source site.CloneSource) (site.Volume, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.CreateVolumeFrom(request, source)
}

func (l *Local) DeleteVolume(_ context.Context, ref chain.Ref) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.DeleteVolume(ref)
}

func (l *Local) ExpandVolume(_ context.Context, ref chain.Ref, sizeBytes uint64) (site.Volume, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.ExpandVolume(ref, sizeBytes)
}

func (l *Local) Volume(_ context.Context, ref chain.Ref) (site.Volume, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Volume(ref)
}

func (l *Local) Attach(_ context.Context, member chain.Ref, node string) (site.Volume, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Attach(member, node)
}

func (l *Local) RecordFilesystem(_ context.Context, member chain.Ref, fsType string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.RecordFilesystem(member, fsType)
}

func (l *Local) Capacity(_ context.Context, placeCount int) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Capacity(placeCount)
}

func (l *Local) CreateSnapshot(_ context.Context, member chain.Ref, name string) (site.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.CreateSnapshot(member, name)
}

func (l *Local) DeleteSnapshot(_ context.Context, ref site.SnapshotRef) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.DeleteSnapshot(ref)
}

func (l *Local) ListSnapshots(context.Context) ([]site.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.ListSnapshots()
}

func (l *Local) Members(_ context.Context, root chain.Ref) ([]chain.Member, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Members(root)
}

func (l *Local) Holdings(_ context.Context, root chain.Ref) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Holdings(root)
}

func (l *Local) Enable(_ context.Context, member chain.Ref, target chain.ClusterID) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.site.Enable(member, target)
	return err
}

func (l *Local) Disable(_ context.Context, member chain.Ref) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Disable(member)
}

func (l *Local) Failover(_ context.Context, source chain.Ref, force bool) (site.Volume, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Failover(source, force)
}

func (l *Local) Demote(_ context.Context, member chain.Ref) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.site.Demote(member)
	return err
}

func (l *Local) Resync(_ context.Context, end chain.Ref, failbackSource chain.ClusterID) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Resync(end, failbackSource)
}

func (l *Local) Status(_ context.Context, member chain.Ref) (site.Status, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Status(member)
}

func (l *Local) Handover(_ context.Context, member chain.Ref) (site.Handover, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Handover(member)
}

func (l *Local) LearnSuccessor(_ context.Context, member, successor chain.Ref) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.LearnSuccessor(member, successor)
}

func (l *Local) PrepareReceive(_ context.Context, request site.ReceiveRequest) ([]site.Receiver, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.PrepareReceive(request)
}

func (l *Local) Spec(_ context.Context, node string) (site.NodeSpec, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Spec(node)
}

func (l *Local) Report(_ context.Context, status site.NodeStatus) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Report(status)
}

// Tick runs the site's time-driven work under the same mutex as the API.
func (l *Local) Tick() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.site.Tick()
}
