package site

import (
	"context"

	"github.com/baton-dr/baton/controllers/storageapi"
	"github.com/baton-dr/baton/storage/chain"
	core "github.com/baton-dr/baton/storage/site"
)

// Cluster is the operator's site as the storage API's Cluster: every call goes
// through Do, under the operator's mutex. The storage API server is mounted
// over it (cmd/baton-controller, storageAPIHandler).
func (o *Operator) Cluster() storageapi.Cluster { return localCluster{o} }

type localCluster struct{ o *Operator }

var _ storageapi.Cluster = localCluster{}

// ID is the cluster the site runs: the loaded site's, else the configured one
// (empty until a StorageCluster exists when none was configured).
func (c localCluster) ID() chain.ClusterID {
	c.o.mu.Lock()
	defer c.o.mu.Unlock()
	if c.o.site != nil {
		return c.o.site.Cluster()
	}
	return c.o.config.Cluster
}

// call runs f under the operator's mutex and hands back its value.
func call[T any](ctx context.Context, o *Operator, f func(*core.Site) (T, error)) (T, error) {
	var out T
	err := o.Do(ctx, func(s *core.Site) error {
		var err error
		out, err = f(s)
		return err
	})
	return out, err
}

func (c localCluster) CreateVolume(ctx context.Context, r core.CreateRequest) (core.Volume, error) {
	return call(ctx, c.o, func(s *core.Site) (core.Volume, error) { return s.CreateVolume(r) })
}

func (c localCluster) DeleteVolume(ctx context.Context, ref chain.Ref) error {
	return c.o.Do(ctx, func(s *core.Site) error { return s.DeleteVolume(ref) })
}

func (c localCluster) ExpandVolume(ctx context.Context, ref chain.Ref, sizeBytes uint64) (core.Volume, error) {
	return call(ctx, c.o, func(s *core.Site) (core.Volume, error) { return s.ExpandVolume(ref, sizeBytes) })
}

func (c localCluster) Volume(ctx context.Context, ref chain.Ref) (core.Volume, error) {
	return call(ctx, c.o, func(s *core.Site) (core.Volume, error) { return s.Volume(ref) })
}

func (c localCluster) Members(ctx context.Context, root chain.Ref) ([]chain.Member, error) {
	return call(ctx, c.o, func(s *core.Site) ([]chain.Member, error) { return s.Members(root) })
}

func (c localCluster) Holdings(ctx context.Context, root chain.Ref) ([]string, error) {
	return call(ctx, c.o, func(s *core.Site) ([]string, error) { return s.Holdings(root) })
}

func (c localCluster) Enable(ctx context.Context, member chain.Ref, target chain.ClusterID) error {
	return c.o.Do(ctx, func(s *core.Site) error { _, err := s.Enable(member, target); return err })
}

func (c localCluster) Disable(ctx context.Context, member chain.Ref) error {
	return c.o.Do(ctx, func(s *core.Site) error { return s.Disable(member) })
}

func (c localCluster) Failover(ctx context.Context, source chain.Ref, force bool) (core.Volume, error) {
	return call(ctx, c.o, func(s *core.Site) (core.Volume, error) { return s.Failover(source, force) })
}

func (c localCluster) Demote(ctx context.Context, member chain.Ref) error {
	return c.o.Do(ctx, func(s *core.Site) error { _, err := s.Demote(member); return err })
}

func (c localCluster) Resync(ctx context.Context, end chain.Ref, failbackSource chain.ClusterID) (bool, error) {
	return call(ctx, c.o, func(s *core.Site) (bool, error) { return s.Resync(end, failbackSource) })
}

func (c localCluster) Status(ctx context.Context, member chain.Ref) (core.Status, error) {
	return call(ctx, c.o, func(s *core.Site) (core.Status, error) { return s.Status(member) })
}

func (c localCluster) Handover(ctx context.Context, member chain.Ref) (core.Handover, error) {
	return call(ctx, c.o, func(s *core.Site) (core.Handover, error) { return s.Handover(member) })
}

func (c localCluster) LearnSuccessor(ctx context.Context, member, successor chain.Ref) error {
	return c.o.Do(ctx, func(s *core.Site) error { return s.LearnSuccessor(member, successor) })
}

func (c localCluster) PrepareReceive(ctx context.Context, r core.ReceiveRequest) ([]core.Receiver, error) {
	return call(ctx, c.o, func(s *core.Site) ([]core.Receiver, error) { return s.PrepareReceive(r) })
}

func (c localCluster) Spec(ctx context.Context, node string) (core.NodeSpec, error) {
	return call(ctx, c.o, func(s *core.Site) (core.NodeSpec, error) { return s.Spec(node) })
}

func (c localCluster) Report(ctx context.Context, status core.NodeStatus) error {
	return c.o.Do(ctx, func(s *core.Site) error { return s.Report(status) })
}
