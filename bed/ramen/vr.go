package ramen

import (
	"context"
	"fmt"
	"time"

	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Client is the csi-addons replication service as a VR controller calls it:
// the driver's service itself in the simulation, a gRPC client elsewhere.
type Client interface {
	EnableVolumeReplication(context.Context, *replication.EnableVolumeReplicationRequest) (*replication.EnableVolumeReplicationResponse, error)
	DisableVolumeReplication(context.Context, *replication.DisableVolumeReplicationRequest) (*replication.DisableVolumeReplicationResponse, error)
	PromoteVolume(context.Context, *replication.PromoteVolumeRequest) (*replication.PromoteVolumeResponse, error)
	DemoteVolume(context.Context, *replication.DemoteVolumeRequest) (*replication.DemoteVolumeResponse, error)
	ResyncVolume(context.Context, *replication.ResyncVolumeRequest) (*replication.ResyncVolumeResponse, error)
	GetVolumeReplicationInfo(context.Context, *replication.GetVolumeReplicationInfoRequest) (*replication.GetVolumeReplicationInfoResponse, error)
}

// State is what a VolumeReplication asks of its volume.
type State uint8

const (
	// Primary: the volume is promoted here and serves the application.
	Primary State = iota + 1
	// Secondary: the volume follows the other site's primary.
	Secondary
	// Deleted: the VolumeReplication is gone; replication is disabled here.
	Deleted
)

func (s State) String() string {
	switch s {
	case Primary:
		return "primary"
	case Secondary:
		return "secondary"
	case Deleted:
		return "deleted"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Intervals of the csi-addons controller.
const (
	// ResyncInterval is how often a secondary that is not ready is retried.
	ResyncInterval = 30 * time.Second
	// InfoInterval is half Ramen's default scheduling interval of one minute.
	InfoInterval = 30 * time.Second
	// RetryInterval follows a failed call.
	RetryInterval = 10 * time.Second
)

// VR is one VolumeReplication on one site.
type VR struct {
	Handle     string
	Site       string
	Wants      State
	AutoResync bool
	Secrets    map[string]string

	// What the controller has observed.
	Enabled   bool
	Promoted  bool
	Demoted   bool
	Ready     bool // Resync answered ready: the data is protected
	Disabled  bool
	Forced    bool // the last promotion needed force
	Info      *replication.GetVolumeReplicationInfoResponse
	LastError string
	// Failing counts the reconciles in a row that ended in a failed call
	// (0 after one that did not): a bed backs off on it, as the csi-addons
	// controller's work queue backs off a failing VolumeReplication.
	Failing int
	Calls   []string // every call made, in order: "enable", "promote", "promote(force)", ...

	// Due is when the controller calls the VR again: what Reconcile said,
	// or at once when its wish changed.
	Due time.Time
}

// Done reports whether the VR reached what it wants.
func (vr *VR) Done() bool {
	switch vr.Wants {
	case Primary:
		return vr.Promoted
	case Secondary:
		return vr.Demoted && vr.Ready
	case Deleted:
		return vr.Disabled
	}
	return false
}

// Want changes what the VR asks for; the observed state of the old wish goes.
func (vr *VR) Want(state State, autoResync bool) {
	if vr.Wants == state && vr.AutoResync == autoResync {
		return
	}
	vr.Wants, vr.AutoResync = state, autoResync
	vr.Promoted, vr.Demoted, vr.Ready, vr.Disabled, vr.Forced = false, false, false, false, false
}

// Reconcile makes the calls the VR's wish needs now and says when to call
// again.
func (vr *VR) Reconcile(ctx context.Context, client Client) time.Duration {
	failing := vr.Failing
	vr.Failing = 0
	again := vr.reconcile(ctx, client)
	if vr.Failing > 0 {
		vr.Failing = failing + 1
	}
	return again
}

func (vr *VR) reconcile(ctx context.Context, client Client) time.Duration {
	switch vr.Wants {
	case Primary:
		return vr.primary(ctx, client)
	case Secondary:
		return vr.secondary(ctx, client)
	case Deleted:
		return vr.deleted(ctx, client)
	}
	return InfoInterval
}

func (vr *VR) source() *replication.ReplicationSource {
	return &replication.ReplicationSource{Type: &replication.ReplicationSource_Volume{
		Volume: &replication.ReplicationSource_VolumeSource{VolumeId: vr.Handle}}}
}

func (vr *VR) primary(ctx context.Context, client Client) time.Duration {
	if !vr.Enabled {
		vr.Calls = append(vr.Calls, "enable")
		if _, err := client.EnableVolumeReplication(ctx, &replication.EnableVolumeReplicationRequest{
			ReplicationSource: vr.source(), Secrets: vr.Secrets}); err != nil {
			return vr.failed("enable", err)
		}
		vr.Enabled = true
	}
	if !vr.Promoted {
		vr.Calls = append(vr.Calls, "promote")
		_, err := client.PromoteVolume(ctx, &replication.PromoteVolumeRequest{ReplicationSource: vr.source(), Secrets: vr.Secrets})
		if status.Code(err) == codes.FailedPrecondition {
			vr.Calls = append(vr.Calls, "promote(force)")
			_, err = client.PromoteVolume(ctx, &replication.PromoteVolumeRequest{ReplicationSource: vr.source(),
				Force: true, Secrets: vr.Secrets})
			vr.Forced = err == nil
		}
		if err != nil {
			return vr.failed("promote", err)
		}
		vr.Promoted = true
	}
	vr.Calls = append(vr.Calls, "info")
	info, err := client.GetVolumeReplicationInfo(ctx, &replication.GetVolumeReplicationInfoRequest{
		ReplicationSource: vr.source(), Secrets: vr.Secrets})
	if err != nil {
		return vr.failed("info", err)
	}
	vr.Info, vr.LastError = info, ""
	return InfoInterval
}

func (vr *VR) secondary(ctx context.Context, client Client) time.Duration {
	vr.Calls = append(vr.Calls, "demote")
	if _, err := client.DemoteVolume(ctx, &replication.DemoteVolumeRequest{ReplicationSource: vr.source(), Secrets: vr.Secrets}); err != nil {
		return vr.failed("demote", err)
	}
	if !vr.Demoted {
		vr.Demoted = true // the first pass only demotes: status Secondary, degraded
		return ResyncInterval
	}
	if vr.Ready {
		return ResyncInterval
	}
	if vr.AutoResync {
		vr.Calls = append(vr.Calls, "resync(force)")
	} else {
		vr.Calls = append(vr.Calls, "resync")
	}
	resp, err := client.ResyncVolume(ctx, &replication.ResyncVolumeRequest{ReplicationSource: vr.source(),
		Force: vr.AutoResync, Secrets: vr.Secrets})
	if err != nil {
		return vr.failed("resync", err)
	}
	vr.Ready, vr.LastError = resp.GetReady(), ""
	return ResyncInterval
}

func (vr *VR) deleted(ctx context.Context, client Client) time.Duration {
	if vr.Disabled {
		return InfoInterval
	}
	vr.Calls = append(vr.Calls, "disable")
	_, err := client.DisableVolumeReplication(ctx, &replication.DisableVolumeReplicationRequest{
		ReplicationSource: vr.source(), Secrets: vr.Secrets})
	if err != nil && status.Code(err) != codes.NotFound {
		return vr.failed("disable", err)
	}
	vr.Disabled, vr.LastError = true, ""
	return InfoInterval
}

func (vr *VR) failed(call string, err error) time.Duration {
	vr.LastError = fmt.Sprintf("%s %s on %s: %v", call, vr.Handle, vr.Site, err)
	vr.Failing = 1
	return RetryInterval
}
