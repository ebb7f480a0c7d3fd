package csi

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// TargetClusterParameter names the cluster Enable ships to when the clusters
// secret lists more than one candidate.
const TargetClusterParameter = "targetClusterID"

// Replication is the csi-addons Replication service. Each RPC resolves the
// handle's chain and acts on the member the chain rules choose; each is
// idempotent, as the csi-addons controller and Ramen repeat them.
type Replication struct {
	replication.UnimplementedControllerServer
	Clusters *Clusters
	Locks    *Locks
	// SyncWait is how long a resync that is not ready, or a promotion whose
	// source's final sync has not arrived, waits for it (sync_wait.go); the
	// zero value answers at once.
	SyncWait SyncWait
}

// call is one replication RPC's resolved chain.
type call struct {
	set     *Set
	chain   chain.Resolution
	handle  chain.Ref
	release func()
}

// begin validates the source, takes the volume's lock and resolves its chain.
func (r *Replication) begin(ctx context.Context, source *replication.ReplicationSource, secrets map[string]string) (call, error) {
	if source == nil {
		return call{}, invalid("replication_source is required (volume_id is reserved)")
	}
	if source.GetVolumegroup() != nil {
		return call{}, invalid("volume group replication is not supported: replication_source must name a volume")
	}
	handle, err := parseHandle(source.GetVolume().GetVolumeId())
	if err != nil {
		return call{}, err
	}
	req, err := begin(r.Locks, r.Clusters, handle.String(), secrets)
	if err != nil {
		return call{}, err
	}
	resolution, err := req.resolve(ctx, handle)
	if err != nil {
		req.release()
		return call{}, err
	}
	return call{set: req.set, chain: resolution, handle: handle, release: req.release}, nil
}

func (r *Replication) EnableVolumeReplication(ctx context.Context, req *replication.EnableVolumeReplicationRequest) (*replication.EnableVolumeReplicationResponse, error) {
	c, err := r.begin(ctx, req.GetReplicationSource(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	return &replication.EnableVolumeReplicationResponse{}, toStatus(c.enable(ctx, req.GetParameters()))
}

// enable makes the chain's end ship toward the other site: the end's own
// cluster is asked, whichever site that is. A call that does not get through
// is Unavailable, and the csi-addons controller calls Enable again.
//
// Two ends leave nothing to do yet, and Enable succeeds. A fenced or demoted
// end ships no more: the Promote that follows makes the new end, and the
// new end ships. An end on another site that did not answer is an unplanned
// fail-over's: the csi-addons controller calls Promote only once Enable
// succeeded, so an Unavailable here would keep the surviving site from
// failing over for as long as the lost one stays away -- the very case DR
// is for. Promote then makes this site's clone the end, and it ships
// (TestEnableWhileTheEndsSiteIsCutOffLetsTheFailoverProceed). An end on
// this site whose cluster did not answer is no such case: it is Unavailable.
func (c call) enable(ctx context.Context, parameters map[string]string) error {
	end := c.chain.End()
	switch {
	case end.State == chain.Unknown && c.set.IsLocal(end.Ref.Cluster) && len(c.set.Local()) > 0:
		return fmt.Errorf("%w: the chain's end %s is on this site, whose cluster did not answer", chain.ErrUnreachable, end.Ref)
	case end.State != chain.Active:
		return nil
	}
	api, err := c.set.Cluster(end.Ref.Cluster)
	if err != nil {
		return err
	}
	target, err := c.target(end.Ref, parameters)
	if err != nil {
		return err
	}
	return api.Enable(ctx, end.Ref, target)
}

// target is the cluster the end ships to: the parameter when given, else the
// one cluster that is neither the end's nor (when the end is local) local.
func (c call) target(end chain.Ref, parameters map[string]string) (chain.ClusterID, error) {
	if t := parameters[TargetClusterParameter]; t != "" {
		if _, err := c.set.Cluster(chain.ClusterID(t)); err != nil || chain.ClusterID(t) == end.Cluster {
			return "", invalid("parameter %s=%q must name another cluster of the secret", TargetClusterParameter, t)
		}
		return chain.ClusterID(t), nil
	}
	if !c.set.IsLocal(end.Cluster) {
		return localCluster(c.set, end)
	}
	local := c.set.Local()
	var candidates []chain.ClusterID
	for _, id := range c.set.IDs() {
		if id != end.Cluster && !slices.Contains(local, id) {
			candidates = append(candidates, id)
		}
	}
	if len(candidates) != 1 {
		return "", invalid("cannot tell where %s ships: candidates %v; set parameter %s", end, candidates, TargetClusterParameter)
	}
	return candidates[0], nil
}

func (r *Replication) DisableVolumeReplication(ctx context.Context, req *replication.DisableVolumeReplicationRequest) (*replication.DisableVolumeReplicationResponse, error) {
	c, err := r.begin(ctx, req.GetReplicationSource(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	err = c.onLastLocal(ctx, "disable", func(api clusterAPI, member chain.Ref) error { return api.Disable(ctx, member) })
	return &replication.DisableVolumeReplicationResponse{}, toStatus(err)
}

func (r *Replication) DemoteVolume(ctx context.Context, req *replication.DemoteVolumeRequest) (*replication.DemoteVolumeResponse, error) {
	c, err := r.begin(ctx, req.GetReplicationSource(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	err = c.onLastLocal(ctx, "demote", func(api clusterAPI, member chain.Ref) error { return api.Demote(ctx, member) })
	return &replication.DemoteVolumeResponse{}, toStatus(err)
}

// clusterAPI is the part of storageapi.API Demote and Disable use.
type clusterAPI interface {
	Demote(ctx context.Context, member chain.Ref) error
	Disable(ctx context.Context, member chain.Ref) error
}

// onLastLocal applies op to the chain's last local member (rule 1; with no
// cluster marked local, the chain's end). A site without a member has nothing
// to act on; a member the chain records whose cluster answers 404 -- reaped,
// or its record gone -- is done already (rule 2).
func (c call) onLastLocal(ctx context.Context, op string, apply func(clusterAPI, chain.Ref) error) error {
	member, err := demoteTarget(c.chain, c.set.Local())
	if errors.Is(err, chain.ErrNoLocalMember) {
		return nil
	}
	if err != nil {
		return err
	}
	if member.State == chain.Unknown && slices.Contains(c.chain.Unreachable, member.Ref.Cluster) {
		return fmt.Errorf("%w: cannot %s %s: its cluster did not answer", chain.ErrUnreachable, op, member.Ref)
	}
	api, err := c.set.Cluster(member.Ref.Cluster)
	if err != nil {
		return err
	}
	err = apply(api, member.Ref)
	if errors.Is(err, core.ErrNotFound) && goneIsDone(c.chain, member.Ref) {
		return nil
	}
	return err
}

func (r *Replication) PromoteVolume(ctx context.Context, req *replication.PromoteVolumeRequest) (*replication.PromoteVolumeResponse, error) {
	c, err := r.begin(ctx, req.GetReplicationSource(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	err = c.promote(ctx, req.GetForce())
	// A planned relocation's promotion comes right after the demotion on
	// the other site, whose final sync is then in flight: looking again is
	// the same call again, idempotent, as ResyncVolume's.
	for look := 0; errors.Is(err, core.ErrFinalSyncPending) && r.SyncWait.again(ctx, look); look++ {
		err = c.promote(ctx, req.GetForce())
	}
	if err != nil {
		return nil, toStatus(err)
	}
	return &replication.PromoteVolumeResponse{}, nil
}

// promote makes this site hold the chain's end (rule 3): an Active end here
// is done; otherwise the local cluster fails the end over, cloning what it
// received. Without force that refuses while the end's site cannot be asked,
// still holds a live primary, or has not shipped its final sync: Ramen then
// retries with force.
func (c call) promote(ctx context.Context, force bool) error {
	end := promoteTarget(c.chain, c.set.Local())
	here := c.set.IsLocal(end.Ref.Cluster)
	switch {
	case here && end.State == chain.Active:
		return nil
	case here && len(c.set.Local()) > 0 && end.State == chain.Unknown:
		return fmt.Errorf("%w: the chain's end %s is on this site, whose cluster did not answer", chain.ErrUnreachable, end.Ref)
	case here && len(c.set.Local()) > 0:
		return fmt.Errorf("%w: the chain's end %s is on this site and %s: there is nothing to fail over from",
			core.ErrNotActive, end.Ref, end.State)
	}
	local, err := localCluster(c.set, end.Ref)
	if err != nil {
		return err
	}
	api, err := c.set.Cluster(local)
	if err != nil {
		return err
	}
	_, err = api.Failover(ctx, end.Ref, force)
	return err
}

func (r *Replication) ResyncVolume(ctx context.Context, req *replication.ResyncVolumeRequest) (*replication.ResyncVolumeResponse, error) {
	c, err := r.begin(ctx, req.GetReplicationSource(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	ready, err := c.resync(ctx)
	// Looking again is the same call again: idempotent, and each look is a
	// storage API call of its own, so no lock of a site is held between
	// looks. A look that fails ends the wait with its error.
	for look := 0; err == nil && !ready && r.SyncWait.again(ctx, look); look++ {
		ready, err = c.resync(ctx)
	}
	if err != nil {
		return nil, toStatus(err)
	}
	return &replication.ResyncVolumeResponse{Ready: ready}, nil
}

// resync asks the chain's end to re-aim its replication at this site, the
// fail-back source, so that only the delta ships (rule 4). A demoted end here
// (a relocation's old primary) reports whether its final sync arrived.
func (c call) resync(ctx context.Context) (bool, error) {
	end := resyncTarget(c.chain, c.set.Local())
	if end.State == chain.Unknown {
		return false, fmt.Errorf("%w: the cluster of the chain's end %s did not answer", chain.ErrUnreachable, end.Ref)
	}
	source := end.Ref.Cluster
	if !c.set.IsLocal(end.Ref.Cluster) || len(c.set.Local()) == 0 {
		local, err := localCluster(c.set, end.Ref)
		if err != nil {
			return false, err
		}
		source = local
	} else if end.State == chain.Active {
		return false, status.Errorf(codes.FailedPrecondition,
			"this site holds the chain's active end %s: resync is asked of the secondary site", end.Ref)
	}
	api, err := c.set.Cluster(end.Ref.Cluster)
	if err != nil {
		return false, err
	}
	return api.Resync(ctx, end.Ref, source)
}

func (r *Replication) GetVolumeReplicationInfo(ctx context.Context, req *replication.GetVolumeReplicationInfoRequest) (*replication.GetVolumeReplicationInfoResponse, error) {
	c, err := r.begin(ctx, req.GetReplicationSource(), req.GetSecrets())
	if err != nil {
		return nil, toStatus(err)
	}
	defer c.release()
	end := resyncTarget(c.chain, c.set.Local())
	if end.State == chain.Unknown {
		return nil, toStatus(fmt.Errorf("%w: the cluster of the chain's end %s did not answer", chain.ErrUnreachable, end.Ref))
	}
	api, err := c.set.Cluster(end.Ref.Cluster)
	if err != nil {
		return nil, toStatus(err)
	}
	st, err := api.Status(ctx, end.Ref)
	if err != nil {
		return nil, toStatus(err)
	}
	return replicationInfo(st), nil
}

// replicationInfo renders the end's status; a pairing that never synced has
// no last sync time.
func replicationInfo(st core.Status) *replication.GetVolumeReplicationInfoResponse {
	out := &replication.GetVolumeReplicationInfoResponse{StatusMessage: st.Message}
	if !st.LastSyncTime.IsZero() {
		out.LastSyncTime = timestamppb.New(st.LastSyncTime)
		out.LastSyncDuration = durationpb.New(st.LastSyncDuration)
		out.LastSyncBytes = int64(min(st.LastSyncBytes, 1<<62))
	}
	switch st.Health {
	case core.Healthy:
		out.Status = replication.GetVolumeReplicationInfoResponse_HEALTHY
	case core.Degraded:
		out.Status = replication.GetVolumeReplicationInfoResponse_DEGRADED
	default:
		out.Status = replication.GetVolumeReplicationInfoResponse_UNKNOWN
	}
	return out
}
