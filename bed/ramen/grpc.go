package ramen

import (
	"context"

	"github.com/csi-addons/spec/lib/go/replication"
)

// GRPC is the csi-addons Replication service over a gRPC connection to the
// driver's socket, as a VR calls it (the beds whose drivers run as
// processes: local, real).
type GRPC struct {
	C replication.ControllerClient
}

var _ Client = GRPC{}

func (g GRPC) EnableVolumeReplication(ctx context.Context, r *replication.EnableVolumeReplicationRequest) (*replication.EnableVolumeReplicationResponse, error) {
	return g.C.EnableVolumeReplication(ctx, r)
}

func (g GRPC) DisableVolumeReplication(ctx context.Context, r *replication.DisableVolumeReplicationRequest) (*replication.DisableVolumeReplicationResponse, error) {
	return g.C.DisableVolumeReplication(ctx, r)
}

func (g GRPC) PromoteVolume(ctx context.Context, r *replication.PromoteVolumeRequest) (*replication.PromoteVolumeResponse, error) {
	return g.C.PromoteVolume(ctx, r)
}

func (g GRPC) DemoteVolume(ctx context.Context, r *replication.DemoteVolumeRequest) (*replication.DemoteVolumeResponse, error) {
	return g.C.DemoteVolume(ctx, r)
}

func (g GRPC) ResyncVolume(ctx context.Context, r *replication.ResyncVolumeRequest) (*replication.ResyncVolumeResponse, error) {
	return g.C.ResyncVolume(ctx, r)
}

func (g GRPC) GetVolumeReplicationInfo(ctx context.Context, r *replication.GetVolumeReplicationInfoRequest) (*replication.GetVolumeReplicationInfoResponse, error) {
	return g.C.GetVolumeReplicationInfo(ctx, r)
}
