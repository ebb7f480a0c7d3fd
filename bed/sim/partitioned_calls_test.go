package sim_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	csispec "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/replication"

	bedsim "github.com/baton-dr/baton/bed/sim"
)

// siteAnswerLimit is how long the surviving site may take to answer its own
// CSI driver while its peer drops every packet: the peer must never cost a
// call its deadline (issue 13, and issue 17's forced promotion that worked
// and answered Unavailable).
const siteAnswerLimit = time.Second

func blockVolume(name string) *csispec.CreateVolumeRequest {
	return &csispec.CreateVolumeRequest{Name: name,
		CapacityRange: &csispec.CapacityRange{RequiredBytes: 64 << 20},
		VolumeCapabilities: []*csispec.VolumeCapability{{
			AccessType: &csispec.VolumeCapability_Block{Block: &csispec.VolumeCapability_BlockVolume{}},
			AccessMode: &csispec.VolumeCapability_AccessMode{Mode: csispec.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}},
		Parameters: map[string]string{"placeCount": "2"}}
}

func replicationSource(handle string) *replication.ReplicationSource {
	return &replication.ReplicationSource{Type: &replication.ReplicationSource_Volume{
		Volume: &replication.ReplicationSource_VolumeSource{VolumeId: handle}}}
}

// protected creates volumes on site-a through its CSI driver, enables their
// replication to site-b and runs until each shipped a first snapshot.
func protected(t *testing.T, w *bedsim.World, volumes int) []string {
	t.Helper()
	a := w.Site("site-a")
	ctx := context.Background()
	var handles []string
	for i := range volumes {
		resp, err := a.CSIController.CreateVolume(ctx, blockVolume(fmt.Sprintf("pvc-src-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		handle := resp.GetVolume().GetVolumeId()
		if _, err := a.CSIReplication.EnableVolumeReplication(ctx, &replication.EnableVolumeReplicationRequest{
			ReplicationSource: replicationSource(handle)}); err != nil {
			t.Fatal(err)
		}
		handles = append(handles, handle)
	}
	shipped := func() bool {
		for _, h := range handles {
			info, err := a.CSIReplication.GetVolumeReplicationInfo(ctx, &replication.GetVolumeReplicationInfoRequest{
				ReplicationSource: replicationSource(h)})
			if err != nil || info.GetLastSyncTime() == nil {
				return false
			}
		}
		return true
	}
	if !w.RunUntil(shipped, 5*time.Minute) {
		t.Fatalf("the volumes shipped no first snapshot in five minutes")
	}
	return handles
}

// TestSurvivingSiteAnswersWhileItsPeerDropsPackets cuts the sites apart (every
// packet between them dropped) and keeps asking the surviving site for new
// volumes and for forced promotions of the other site's: every call its CSI
// driver makes to it answers OK within siteAnswerLimit -- no call waits for
// a peer call (its own, or another's holding a lock), and a promotion that
// worked is never answered with the peer's timeout.
func TestSurvivingSiteAnswersWhileItsPeerDropsPackets(t *testing.T) {
	for name, records := range map[string]bedsim.Records{"memory": bedsim.MemoryRecords, "CRD": bedsim.CRDRecords} {
		t.Run(name+" records", func(t *testing.T) {
			w, err := bedsim.New(bedsim.Options{Seed: 13, Scenario: "test/partitioned-calls", Records: records})
			if err != nil {
				t.Fatal(err)
			}
			handles := protected(t, w, 4)
			w.Partition("site-a", "site-b", true)
			w.Run(5 * time.Second)
			w.RecordCalls()
			b := w.Site("site-b")
			ctx := context.Background()
			for i, handle := range handles {
				var createErr, promoteErr error
				create := w.Timed(func() { _, createErr = b.CSIController.CreateVolume(ctx, blockVolume(fmt.Sprintf("pvc-new-%d", i))) })
				w.Run(3 * time.Second)
				promote := w.Timed(func() {
					_, promoteErr = b.CSIReplication.PromoteVolume(ctx, &replication.PromoteVolumeRequest{
						ReplicationSource: replicationSource(handle), Force: true})
				})
				t.Logf("volume %d: CSI CreateVolume %s (%v), PromoteVolume(force) %s (%v)", i, create, createErr, promote, promoteErr)
				if createErr != nil || promoteErr != nil {
					t.Errorf("volume %d on the surviving site: create %v, forced promote %v; want both OK", i, createErr, promoteErr)
				}
				w.Run(3 * time.Second)
			}
			asked := 0
			for _, c := range w.Calls() {
				if c.From != "site-b/csi-controller" || c.To != b.Operator() {
					continue
				}
				asked++
				if c.Err != nil || c.Took > siteAnswerLimit {
					t.Errorf("%s's %s at %s took %s (%v); want an answer within %s", c.To, c.Operation,
						c.At.Format(time.TimeOnly), c.Took, c.Err, siteAnswerLimit)
				}
			}
			if asked < 2*len(handles) {
				t.Fatalf("the CSI driver asked its site %d times, want at least %d", asked, 2*len(handles))
			}
		})
	}
}
