// Package storageapi is the storage API of one site: the operations its CSI
// driver, its node agents and the peer sites call on the site's control plane
// (storage/core). The site operator serves it over HTTPS with a bearer token;
// Client speaks it; the simulation implements Cluster over its simulated
// network. One server implementation, whatever stores the records.
package storageapi

import (
	"context"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Cluster is one site's storage API. Errors wrap the storage/core sentinels
// (errors.Is(err, core.ErrNotFound), …) whatever the transport, and
// chain.ErrUnreachable when the site could not be reached at all -- which is
// never an answer about the volume.
type Cluster interface {
	// ID is the cluster this API serves.
	ID() chain.ClusterID

	CreateVolume(ctx context.Context, request core.CreateRequest) (core.Volume, error)
	DeleteVolume(ctx context.Context, ref chain.Ref) error
	ExpandVolume(ctx context.Context, ref chain.Ref, sizeBytes uint64) (core.Volume, error)
	Volume(ctx context.Context, ref chain.Ref) (core.Volume, error)
	// CreateVolumeFrom clones a snapshot or a local member into a new volume.
	CreateVolumeFrom(ctx context.Context, request core.CreateRequest, source core.CloneSource) (core.Volume, error)
	// Attach makes node the member's primary; RecordFilesystem remembers what
	// the node found on its device (rule 7).
	Attach(ctx context.Context, member chain.Ref, node string) (core.Volume, error)
	RecordFilesystem(ctx context.Context, member chain.Ref, fsType string) error
	// Capacity is the largest volume the site can place on placeCount nodes.
	Capacity(ctx context.Context, placeCount int) (uint64, error)

	// CSI snapshots, taken of the member named.
	CreateSnapshot(ctx context.Context, member chain.Ref, name string) (core.Snapshot, error)
	DeleteSnapshot(ctx context.Context, ref core.SnapshotRef) error
	ListSnapshots(ctx context.Context) ([]core.Snapshot, error)

	// Members and Holdings answer what the site records of a chain.
	Members(ctx context.Context, root chain.Ref) ([]chain.Member, error)
	Holdings(ctx context.Context, root chain.Ref) ([]string, error)

	// Replication, addressed to the member the chain rules choose.
	Enable(ctx context.Context, member chain.Ref, target chain.ClusterID) error
	Disable(ctx context.Context, member chain.Ref) error
	Failover(ctx context.Context, source chain.Ref, force bool) (core.Volume, error)
	Demote(ctx context.Context, member chain.Ref) error
	Resync(ctx context.Context, end chain.Ref, failbackSource chain.ClusterID) (ready bool, err error)
	Status(ctx context.Context, member chain.Ref) (core.Status, error)

	// Between sites.
	Handover(ctx context.Context, member chain.Ref) (core.Handover, error)
	LearnSuccessor(ctx context.Context, member, successor chain.Ref) error
	PrepareReceive(ctx context.Context, request core.ReceiveRequest) ([]core.Receiver, error)

	// Between the site and its node agents.
	Spec(ctx context.Context, node string) (core.NodeSpec, error)
	Report(ctx context.Context, status core.NodeStatus) error
}
