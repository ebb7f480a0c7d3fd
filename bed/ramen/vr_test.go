package ramen_test

import (
	"context"
	"slices"
	"testing"

	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/baton-dr/baton/bed/ramen"
)

// scriptedClient is a test double of the csi-addons replication service: it
// records the calls and answers from a script.
type scriptedClient struct {
	calls        []string
	promoteCodes []codes.Code // answers to successive non-forced promotions
	resyncReady  []bool
	disableCode  codes.Code
	infoCode     codes.Code
	// lastSync is the info's last sync time; nil before a first sync.
	lastSync *timestamppb.Timestamp
	// journal, if set, gets every call too, prefixed with site: the
	// order of calls across sites.
	journal *[]string
	site    string
}

func (d *scriptedClient) record(call string) {
	d.calls = append(d.calls, call)
	if d.journal != nil {
		*d.journal = append(*d.journal, d.site+" "+call)
	}
}

func (d *scriptedClient) answer(c codes.Code) error {
	if c == codes.OK {
		return nil
	}
	return status.Error(c, c.String())
}

func (d *scriptedClient) EnableVolumeReplication(context.Context, *replication.EnableVolumeReplicationRequest) (*replication.EnableVolumeReplicationResponse, error) {
	d.record("enable")
	return &replication.EnableVolumeReplicationResponse{}, nil
}

func (d *scriptedClient) DisableVolumeReplication(context.Context, *replication.DisableVolumeReplicationRequest) (*replication.DisableVolumeReplicationResponse, error) {
	d.record("disable")
	return &replication.DisableVolumeReplicationResponse{}, d.answer(d.disableCode)
}

func (d *scriptedClient) PromoteVolume(_ context.Context, r *replication.PromoteVolumeRequest) (*replication.PromoteVolumeResponse, error) {
	if r.GetForce() {
		d.record("promote(force)")
		return &replication.PromoteVolumeResponse{}, nil
	}
	d.record("promote")
	c := codes.OK
	if len(d.promoteCodes) > 0 {
		c, d.promoteCodes = d.promoteCodes[0], d.promoteCodes[1:]
	}
	return &replication.PromoteVolumeResponse{}, d.answer(c)
}

func (d *scriptedClient) DemoteVolume(context.Context, *replication.DemoteVolumeRequest) (*replication.DemoteVolumeResponse, error) {
	d.record("demote")
	return &replication.DemoteVolumeResponse{}, nil
}

func (d *scriptedClient) ResyncVolume(_ context.Context, r *replication.ResyncVolumeRequest) (*replication.ResyncVolumeResponse, error) {
	call := "resync"
	if r.GetForce() {
		call = "resync(force)"
	}
	d.record(call)
	ready := false
	if len(d.resyncReady) > 0 {
		ready, d.resyncReady = d.resyncReady[0], d.resyncReady[1:]
	}
	return &replication.ResyncVolumeResponse{Ready: ready}, nil
}

func (d *scriptedClient) GetVolumeReplicationInfo(context.Context, *replication.GetVolumeReplicationInfoRequest) (*replication.GetVolumeReplicationInfoResponse, error) {
	d.record("info")
	return &replication.GetVolumeReplicationInfoResponse{LastSyncTime: d.lastSync}, d.answer(d.infoCode)
}

func reconcile(vr *ramen.VR, d *scriptedClient, passes int) {
	for range passes {
		vr.Reconcile(context.Background(), d)
	}
}

func TestAPrimaryEnablesPromotesAndForcesOnlyOnFailedPrecondition(t *testing.T) {
	tests := []struct {
		name   string
		codes  []codes.Code
		want   []string
		forced bool
	}{
		{"the peer answers", nil, []string{"enable", "promote", "info"}, false},
		{"the peer is unreachable", []codes.Code{codes.FailedPrecondition},
			[]string{"enable", "promote", "promote(force)", "info"}, true},
		{"a final sync in flight is retried without force", []codes.Code{codes.Unavailable},
			[]string{"enable", "promote"}, false},
	}
	for _, tt := range tests {
		d := &scriptedClient{promoteCodes: tt.codes}
		vr := &ramen.VR{Handle: "h", Wants: ramen.Primary}
		vr.Reconcile(context.Background(), d)
		if !slices.Equal(d.calls, tt.want) || vr.Forced != tt.forced {
			t.Errorf("%s: calls %v forced %v, want %v forced %v", tt.name, d.calls, vr.Forced, tt.want, tt.forced)
		}
	}
}

func TestASecondaryDemotesThenResyncsUntilReady(t *testing.T) {
	d := &scriptedClient{resyncReady: []bool{false, true}}
	vr := &ramen.VR{Handle: "h"}
	vr.Want(ramen.Secondary, true)
	reconcile(vr, d, 4)
	want := []string{"demote", "demote", "resync(force)", "demote", "resync(force)", "demote"}
	if !slices.Equal(d.calls, want) || !vr.Done() {
		t.Errorf("calls %v done %v, want %v and done", d.calls, vr.Done(), want)
	}
}

func TestADeletedVRToleratesNotFound(t *testing.T) {
	d := &scriptedClient{disableCode: codes.NotFound}
	vr := &ramen.VR{Handle: "h", Wants: ramen.Deleted}
	reconcile(vr, d, 2)
	if !vr.Done() || !slices.Equal(d.calls, []string{"disable"}) {
		t.Errorf("calls %v done %v", d.calls, vr.Done())
	}
	d = &scriptedClient{disableCode: codes.Internal}
	vr = &ramen.VR{Handle: "h", Wants: ramen.Deleted}
	reconcile(vr, d, 1)
	if vr.Done() || vr.LastError == "" {
		t.Errorf("an Internal disable counted as done")
	}
}

func TestWantingAnotherStateForgetsTheOld(t *testing.T) {
	d := &scriptedClient{}
	vr := &ramen.VR{Handle: "h", Wants: ramen.Primary}
	vr.Reconcile(context.Background(), d)
	vr.Want(ramen.Secondary, false)
	if vr.Done() || vr.Promoted {
		t.Errorf("a VR turned secondary still counts its promotion")
	}
}

// TestFailingCountsFailedReconcilesInARow: a bed backs off on it, so it
// must count only reconciles that ended in a failed call, in a row.
func TestFailingCountsFailedReconcilesInARow(t *testing.T) {
	d := &scriptedClient{promoteCodes: []codes.Code{codes.Unavailable, codes.Unavailable, codes.OK}}
	vr := &ramen.VR{Handle: "h", Wants: ramen.Primary}
	var failing []int
	for range 3 {
		vr.Reconcile(context.Background(), d)
		failing = append(failing, vr.Failing)
	}
	if want := []int{1, 2, 0}; !slices.Equal(failing, want) || !vr.Done() {
		t.Errorf("failing after each reconcile %v done %v, want %v and done", failing, vr.Done(), want)
	}
}
