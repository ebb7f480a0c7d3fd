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

// Cluster carries one site's storage API: the operations of ops.go, over
// HTTPS (Client), in process (Local) or across the simulated network. Errors
// wrap the storage/core sentinels (errors.Is(err, core.ErrNotFound), …)
// whatever the transport, and chain.ErrUnreachable when the site could not
// be reached at all -- which is never an answer about the volume.
type Cluster interface {
	// ID is the cluster this API serves.
	ID() chain.ClusterID
	// Carry makes op with request, one of op's own, and returns op's answer.
	Carry(ctx context.Context, op Operation, request any) (any, error)
}

// API is a cluster's storage API as its callers use it: one typed method
// per operation, each carried by the Cluster.
type API struct{ Cluster }

func (a API) CreateVolume(ctx context.Context, request core.CreateRequest) (core.Volume, error) {
	return createVolume.call(ctx, a.Cluster, CreateVolumeBody{Request: request})
}

// CreateVolumeFrom clones a snapshot or a local member into a new volume.
func (a API) CreateVolumeFrom(ctx context.Context, request core.CreateRequest, source core.CloneSource) (core.Volume, error) {
	return createVolume.call(ctx, a.Cluster, CreateVolumeBody{Request: request, Source: &source})
}

func (a API) DeleteVolume(ctx context.Context, ref chain.Ref) error {
	return errOf(deleteVolume.call(ctx, a.Cluster, ref))
}

func (a API) ExpandVolume(ctx context.Context, ref chain.Ref, sizeBytes uint64) (core.Volume, error) {
	return expandVolume.call(ctx, a.Cluster, expandRequest{Volume: ref, SizeBytes: sizeBytes})
}

func (a API) Volume(ctx context.Context, ref chain.Ref) (core.Volume, error) {
	return volume.call(ctx, a.Cluster, ref)
}

// Attach makes node the member's primary.
func (a API) Attach(ctx context.Context, member chain.Ref, node string) (core.Volume, error) {
	return attach.call(ctx, a.Cluster, attachRequest{Member: member, Node: node})
}

// RecordFilesystem remembers what the node found on its device (rule 7).
func (a API) RecordFilesystem(ctx context.Context, member chain.Ref, fsType string) error {
	return errOf(recordFilesystem.call(ctx, a.Cluster, filesystemRequest{Member: member, FsType: fsType}))
}

// Capacity is the largest volume the site can place on placeCount nodes.
func (a API) Capacity(ctx context.Context, placeCount int) (uint64, error) {
	answer, err := capacity.call(ctx, a.Cluster, placeCount)
	return answer.Bytes, err
}

// CreateSnapshot takes a CSI snapshot of the member named.
func (a API) CreateSnapshot(ctx context.Context, member chain.Ref, name string) (core.Snapshot, error) {
	return createSnapshot.call(ctx, a.Cluster, snapshotRequest{Member: member, Name: name})
}

func (a API) DeleteSnapshot(ctx context.Context, ref core.SnapshotRef) error {
	return errOf(deleteSnapshot.call(ctx, a.Cluster, ref))
}

func (a API) ListSnapshots(ctx context.Context) ([]core.Snapshot, error) {
	return listSnapshots.call(ctx, a.Cluster, struct{}{})
}

// Members answers what the site records of a chain.
func (a API) Members(ctx context.Context, root chain.Ref) ([]chain.Member, error) {
	return members.call(ctx, a.Cluster, root)
}

// Holdings answers the snapshots the site holds of a chain.
func (a API) Holdings(ctx context.Context, root chain.Ref) ([]string, error) {
	return holdings.call(ctx, a.Cluster, root)
}

// Enable replicates the member to target; it, Disable, Failover, Demote and
// Resync are addressed to the member the chain rules choose.
func (a API) Enable(ctx context.Context, member chain.Ref, target chain.ClusterID) error {
	return errOf(enable.call(ctx, a.Cluster, enableRequest{Member: member, Target: target}))
}

func (a API) Disable(ctx context.Context, member chain.Ref) error {
	return errOf(disable.call(ctx, a.Cluster, member))
}

func (a API) Failover(ctx context.Context, source chain.Ref, force bool) (core.Volume, error) {
	return failover.call(ctx, a.Cluster, failoverRequest{Source: source, Force: force})
}

func (a API) Demote(ctx context.Context, member chain.Ref) error {
	return errOf(demote.call(ctx, a.Cluster, member))
}

func (a API) Resync(ctx context.Context, end chain.Ref, failbackSource chain.ClusterID) (ready bool, err error) {
	answer, err := resync.call(ctx, a.Cluster, resyncRequest{End: end, FailbackSource: failbackSource})
	return answer.Ready, err
}

func (a API) Status(ctx context.Context, member chain.Ref) (core.Status, error) {
	return status.call(ctx, a.Cluster, member)
}

// Handover, LearnSuccessor and PrepareReceive are asked between sites.
func (a API) Handover(ctx context.Context, member chain.Ref) (core.Handover, error) {
	return handover.call(ctx, a.Cluster, member)
}

func (a API) LearnSuccessor(ctx context.Context, member, successor chain.Ref) error {
	return errOf(learnSuccessor.call(ctx, a.Cluster, successorRequest{Member: member, Successor: successor}))
}

func (a API) PrepareReceive(ctx context.Context, request core.ReceiveRequest) ([]core.Receiver, error) {
	return prepareReceive.call(ctx, a.Cluster, request)
}

// Spec and Report are between the site and its node agents.
func (a API) Spec(ctx context.Context, node string) (core.NodeSpec, error) {
	return spec.call(ctx, a.Cluster, node)
}

func (a API) Report(ctx context.Context, status core.NodeStatus) error {
	return errOf(report.call(ctx, a.Cluster, status))
}

// errOf keeps the error of an operation that answers nothing.
func errOf(_ struct{}, err error) error { return err }
