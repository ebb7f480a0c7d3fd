package csi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// These tests are the seed's commits, each a bug in exactly this driver, run
// end to end: gRPC on unix sockets, the storage API over HTTPS, two sites.

func source(handle string) *replication.ReplicationSource {
	return &replication.ReplicationSource{Type: &replication.ReplicationSource_Volume{
		Volume: &replication.ReplicationSource_VolumeSource{VolumeId: handle}}}
}

func (d *driver) enable(handle string) error {
	_, err := d.replication.EnableVolumeReplication(ctx, &replication.EnableVolumeReplicationRequest{ReplicationSource: source(handle), Secrets: d.secrets})
	return err
}

func (d *driver) disable(handle string) error {
	_, err := d.replication.DisableVolumeReplication(ctx, &replication.DisableVolumeReplicationRequest{ReplicationSource: source(handle), Secrets: d.secrets})
	return err
}

func (d *driver) promote(handle string, force bool) error {
	_, err := d.replication.PromoteVolume(ctx, &replication.PromoteVolumeRequest{ReplicationSource: source(handle), Force: force, Secrets: d.secrets})
	return err
}

func (d *driver) demote(handle string) error {
	_, err := d.replication.DemoteVolume(ctx, &replication.DemoteVolumeRequest{ReplicationSource: source(handle), Secrets: d.secrets})
	return err
}

func (d *driver) resync(handle string) (bool, error) {
	r, err := d.replication.ResyncVolume(ctx, &replication.ResyncVolumeRequest{ReplicationSource: source(handle), Force: true, Secrets: d.secrets})
	return r.GetReady(), err
}

func (d *driver) info(handle string) (*replication.GetVolumeReplicationInfoResponse, error) {
	return d.replication.GetVolumeReplicationInfo(ctx, &replication.GetVolumeReplicationInfoRequest{ReplicationSource: source(handle), Secrets: d.secrets})
}

// create makes a Filesystem volume on the driver's site, on both its nodes.
func (d *driver) create(t testing.TB, name string) string {
	t.Helper()
	r, err := d.controller.CreateVolume(ctx, &csiapi.CreateVolumeRequest{Name: name, CapacityRange: &csiapi.CapacityRange{RequiredBytes: 1 << 30},
		VolumeCapabilities: []*csiapi.VolumeCapability{mountCapability("")}, Parameters: map[string]string{"placeCount": "2"}, Secrets: d.secrets})
	if err != nil {
		t.Fatalf("CreateVolume(%s): %v", name, err)
	}
	return r.GetVolume().GetVolumeId()
}

// Ramen's primary: Enable, then Promote, retrying with force on FailedPrecondition.
func (d *driver) becomePrimary(t testing.TB, handle string, forceAllowed bool) {
	t.Helper()
	if err := d.enable(handle); err != nil {
		t.Fatalf("enable on %s: %v", d.site[:8], err)
	}
	err := d.promote(handle, false)
	if status.Code(err) == codes.FailedPrecondition && forceAllowed {
		err = d.promote(handle, true)
	}
	if err != nil {
		t.Fatalf("promote on %s: %v", d.site[:8], err)
	}
}

// resyncUntilReady is Ramen's secondary: Demote + Resync until ready.
func (w *world) resyncUntilReady(d *driver, handle string) {
	w.t.Helper()
	for i := 0; i < 30; i++ {
		if err := d.demote(handle); err != nil {
			w.t.Fatalf("demote on %s: %v", d.site[:8], err)
		}
		ready, err := d.resync(handle)
		if err != nil && status.Code(err) != codes.FailedPrecondition {
			w.t.Fatalf("resync on %s: %v", d.site[:8], err)
		}
		if ready {
			return
		}
		w.run(5 * time.Second)
	}
	w.t.Fatalf("resync of %s on %s never became ready", handle, d.site[:8])
}

func wantCode(t testing.TB, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: %v, want %s", what, err, code)
	}
}

func (w *world) volume(ref chain.Ref) core.Volume {
	w.t.Helper()
	v, err := w.api(ref.Cluster).Volume(ctx, ref)
	w.must(err)
	return v
}

func (w *world) end(handle string) chain.Member {
	w.t.Helper()
	root, err := chain.ParseRef(handle)
	w.must(err)
	r, err := chain.Resolve(w, []chain.ClusterID{clusterA, clusterB}, root)
	w.must(err)
	return r.End()
}

// Members makes the world a chain.Directory that sees both sites.
func (w *world) Members(c chain.ClusterID, root chain.Ref) ([]chain.Member, error) {
	return w.api(c).Members(ctx, root)
}

// twoDrivers are site A's driver (node a1) and site B's (node b1), each with
// its operator's secret: its own cluster local, the peer registered.
func (w *world) twoDrivers() (*driver, *driver) {
	return w.newDriver(clusterA, "a1", w.secret(clusterA)), w.newDriver(clusterB, "b1", w.secret(clusterB))
}

// failedOver protects a volume on A, cuts A off and fails it over to B with
// force, then heals: A:v1 still believes it is primary.
func failedOver(t testing.TB) (*world, *driver, *driver, string, chain.Ref) {
	w := newWorld(t)
	a, b := w.twoDrivers()
	handle := a.create(t, "pvc-wordpress")
	a.becomePrimary(t, handle, false)
	w.run(3 * time.Minute)
	w.partitioned.Store(true)
	if err := b.enable(handle); err != nil {
		t.Fatalf("Enable on B while A is cut off (nothing to do yet): %v", err)
	}
	wantCode(t, "Promote without force while A is cut off", b.promote(handle, false), codes.FailedPrecondition)
	b.becomePrimary(t, handle, true)
	end := w.end(handle)
	if end.Ref.Cluster != clusterB || end.Generation != 1 || end.State != chain.Active {
		t.Fatalf("after the forced fail-over the chain ends at %+v, want B's clone", end)
	}
	w.partitioned.Store(false)
	return w, a, b, handle, end.Ref
}

// 280662f: after an unplanned fail-over A->B, Ramen demotes the old primary
// on A and deletes its VolumeReplication. Both act on A's last member, never
// on the live primary on B.
func TestDemoteAndDisableActOnTheLastLocalMember(t *testing.T) {
	w, a, _, handle, clone := failedOver(t)
	root, _ := chain.ParseRef(handle)
	if err := a.demote(handle); err != nil {
		t.Fatal(err)
	}
	if v := w.volume(root); v.State != chain.Demoted {
		t.Errorf("A:v1 is %s after Demote on A, want Demoted", v.State)
	}
	if v := w.volume(clone); v.State != chain.Active || v.Primary == "" {
		t.Fatalf("the live primary B:v2 is %s (primary %q) after Demote on A: the wrong member was demoted", v.State, v.Primary)
	}
	if err := a.disable(handle); err != nil {
		t.Fatal(err)
	}
	if st, err := w.api(clusterA).Status(ctx, root); err != nil || !strings.Contains(st.Message, "not replicated") {
		t.Errorf("A:v1's replication after Disable on A: %+v, %v; want it gone", st, err)
	}
	if st, err := w.api(clusterB).Status(ctx, clone); err != nil || st.Target != clusterA {
		t.Errorf("B:v2's replication after Disable on A: %+v, %v; want it untouched, aimed at A", st, err)
	}
}

// 18c0824 and rule 2: a reaped member's 404 is success for Demote and
// Disable; a handle without any record stays NotFound.
func TestAReapedMembersNotFoundIsSuccessButAStrangerStaysNotFound(t *testing.T) {
	w, a, _, handle, _ := failedOver(t)
	root, _ := chain.ParseRef(handle)
	w.resyncUntilReady(a, handle)
	w.run(10 * time.Second)
	if v := w.volume(root); v.State != chain.Tombstone {
		t.Fatalf("A:v1 is %s after the fail-back resync, want reaped", v.State)
	}
	if err := w.api(clusterA).Demote(ctx, root); !strings.Contains(errString(err), "not found") {
		t.Fatalf("the site answers Demote of the reaped A:v1 with %v; the test needs its 404", err)
	}
	if err := a.demote(handle); err != nil {
		t.Errorf("Demote of a reaped member the chain records: %v, want success", err)
	}
	if err := a.disable(handle); err != nil {
		t.Errorf("Disable of a reaped member the chain records: %v, want success", err)
	}
	stranger := string(clusterA) + ":aaaaaaaa-0000-4000-8000-000000009999"
	wantCode(t, "Demote of a handle nobody records", a.demote(stranger), codes.NotFound)
	wantCode(t, "Disable of a handle nobody records", a.disable(stranger), codes.NotFound)
	wantCode(t, "Promote of a handle nobody records", a.promote(stranger, true), codes.NotFound)
}

// 9ee0e79 and 2b6e428: Resync and the status read address the chain's end,
// with the local cluster as the fail-back source: B:v2 ships to A, delta only.
func TestResyncAndStatusAddressTheEndWithTheLocalClusterAsSource(t *testing.T) {
	w, a, _, handle, clone := failedOver(t)
	if st, _ := w.api(clusterB).Status(ctx, clone); st.Target != clusterA || !st.LastSyncTime.IsZero() {
		t.Fatalf("before the resync B:v2's pairing is %+v", st)
	}
	w.resyncUntilReady(a, handle)
	st, err := w.api(clusterB).Status(ctx, clone)
	if err != nil || st.Target != clusterA || st.LastSyncTime.IsZero() {
		t.Fatalf("B:v2's status after the resync from A: %+v, %v; want it shipping to A", st, err)
	}
	info, err := a.info(handle)
	if err != nil {
		t.Fatal(err)
	}
	if !info.GetLastSyncTime().AsTime().Equal(st.LastSyncTime) || info.GetLastSyncBytes() != int64(st.LastSyncBytes) {
		t.Errorf("GetVolumeReplicationInfo on A reports %v/%d, the end B:v2 synced %v/%d", info.GetLastSyncTime().AsTime(),
			info.GetLastSyncBytes(), st.LastSyncTime, st.LastSyncBytes)
	}
	if info.GetStatus() != replication.GetVolumeReplicationInfoResponse_HEALTHY || info.GetLastSyncDuration() == nil {
		t.Errorf("info %v, want HEALTHY with a duration", info)
	}
}

// A planned relocation: Ramen demotes the primary on A and promotes B at
// once, while A's final sync is in flight. A driver that waits for it (the
// world passing a second a pause) promotes on the first call; the same first
// call without the wait answers Unavailable (never FailedPrecondition, which
// the csi-addons controller would answer with a forced promotion of an
// older snapshot) -- the wait, not the world, made it succeed.
func TestAPromotionThatWaitsForTheFinalSyncSucceedsOnTheFirstCall(t *testing.T) {
	for _, wait := range []bool{false, true} {
		w := newWorld(t)
		pauses := 0
		if wait {
			w.syncWait = csi.SyncWait{Looks: 30, Pause: func(context.Context) error { pauses++; return w.Run(time.Second) }}
		}
		a, b := w.twoDrivers()
		handle := a.create(t, "pvc-gitea")
		a.becomePrimary(t, handle, false)
		w.run(3 * time.Minute)
		if err := b.enable(handle); err != nil {
			t.Fatal(err)
		}
		if err := a.demote(handle); err != nil {
			t.Fatal(err)
		}
		err := b.promote(handle, false)
		if !wait {
			wantCode(t, "the first promotion on B, not waiting", err, codes.Unavailable)
			continue
		}
		if err != nil {
			t.Fatalf("the first promotion on B, waiting: %v", err)
		}
		if pauses == 0 {
			t.Fatalf("the waiting promotion succeeded at its first look: the test shows nothing")
		}
		if end := w.end(handle); end.Ref.Cluster != clusterB || end.State != chain.Active {
			t.Fatalf("after the promotion the chain ends at %+v, want B's clone, active", end)
		}
	}
}

// The csi-addons controller asks again only 30 s after a resync that is
// not ready. A driver that waits for the sync its resync kicked (the world
// passing a second a pause) answers ready on the first call of the
// fail-back; the same first call without the wait answers not ready -- the
// wait, not the world, made it ready.
func TestAResyncThatWaitsForItsSyncIsReadyOnTheFirstCall(t *testing.T) {
	for _, wait := range []bool{false, true} {
		w, a, _, handle, clone := failedOver(t)
		pauses := 0
		if wait {
			w.syncWait = csi.SyncWait{Looks: 30, Pause: func(context.Context) error { pauses++; return w.Run(time.Second) }}
			a = w.newDriver(clusterA, "a1", w.secret(clusterA))
		}
		if err := a.demote(handle); err != nil {
			t.Fatal(err)
		}
		ready, err := a.resync(handle)
		if err != nil {
			t.Fatalf("the first resync on A (waiting %t): %v", wait, err)
		}
		if ready != wait {
			t.Fatalf("the first resync on A (waiting %t) answers ready %t", wait, ready)
		}
		if !wait {
			continue
		}
		if pauses == 0 {
			t.Fatalf("the waiting resync was ready at its first look: the test shows nothing")
		}
		if st, err := w.api(clusterB).Status(ctx, clone); err != nil || st.Target != clusterA || st.LastSyncTime.IsZero() {
			t.Fatalf("B:v2 after the waiting resync answered ready (%d pauses): %+v, %v; want it synced to A", pauses, st, err)
		}
	}
}

// bede3dd: Promote addresses the chain's end. The fail-back promote on A must
// fail over B:v2 (which holds the data), not A's reaped member.
func TestPromoteAddressesTheEnd(t *testing.T) {
	w, a, b, handle, clone := failedOver(t)
	w.resyncUntilReady(a, handle)
	w.run(10 * time.Second)
	relocate(w, b, a, handle)
	end := w.end(handle)
	if end.Ref.Cluster != clusterA || end.Predecessor != clone || end.Generation != 2 {
		t.Fatalf("after the relocation back the chain ends at %+v, want A's clone of %s", end, clone)
	}
	if err := a.promote(handle, false); err != nil {
		t.Errorf("Promote of the Active local end again: %v, want OK", err)
	}
	if again := w.end(handle); again.Ref != end.Ref {
		t.Errorf("a repeated Promote moved the end to %s", again.Ref)
	}
}

// relocate is Ramen's planned relocation from one driver's site to the other's.
func relocate(w *world, from, to *driver, handle string) {
	w.t.Helper()
	w.resyncUntilReady(from, handle)
	to.becomePrimary(w.t, handle, false)
	w.resyncUntilReady(from, handle)
	w.run(5 * time.Second)
}

// e356b56 and rule 6: twelve moves; each site resolves the handle to the
// newest member while the other is unreachable. The site holding the end
// stages it; the other never falls back to an earlier member.
func TestTwelveMovesStageTheEndWhileTheOtherSiteIsUnreachable(t *testing.T) {
	w := newWorld(t)
	a, b := w.twoDrivers()
	handle := a.create(t, "pvc-vm-disk")
	a.becomePrimary(t, handle, false)
	w.run(2 * time.Minute)
	drivers := []*driver{a, b}
	for move := 0; move < 12; move++ {
		relocate(w, drivers[move%2], drivers[(move+1)%2], handle)
	}
	end := w.end(handle)
	if end.Generation != 12 || end.Ref.Cluster != clusterA || end.State != chain.Active {
		t.Fatalf("after twelve moves the chain ends at %+v", end)
	}
	w.partitioned.Store(true)
	stage := &csiapi.NodeStageVolumeRequest{VolumeId: handle, StagingTargetPath: "/staging/vm", Secrets: a.secrets,
		VolumeCapability: mountCapability("")}
	if _, err := a.node.NodeStageVolume(ctx, stage); err != nil {
		t.Fatalf("staging on A while B is unreachable: %v", err)
	}
	if got, want := a.mounter.device("/staging/vm"), "/dev/fake/vol-"+string(end.Ref.Volume); got != want {
		t.Fatalf("staged %q, want the end's device %q", got, want)
	}
	if v := w.volume(end.Ref); v.Primary != "a1" {
		t.Errorf("the end's primary is %q after staging on a1", v.Primary)
	}
	stage.Secrets = b.secrets
	_, err := b.node.NodeStageVolume(ctx, stage)
	wantCode(t, "staging on B while A (holding the end) is unreachable", err, codes.Unavailable)
	if mounted, _ := b.mounter.Mounted(ctx, "/staging/vm"); mounted {
		t.Errorf("B staged %s: an earlier member was attached on a partitioned site", b.mounter.device("/staging/vm"))
	}
	w.partitioned.Store(false)
	if info, err := b.info(handle); err != nil || info.GetLastSyncTime() == nil {
		t.Errorf("status of the twelve-move chain from B: %v, %v", info, err)
	}
}

// Rule 5: a looping pair of records is an error, promptly, never a hang.
func TestALoopingPairIsAnErrorNotAHang(t *testing.T) {
	w, a, b, handle, clone := failedOver(t)
	root, _ := chain.ParseRef(handle)
	w.must(w.api(clusterB).LearnSuccessor(ctx, clone, root)) // B:v2 now claims A:v1 follows it
	for name, err := range map[string]error{
		"Promote on A": a.promote(handle, true), "Demote on A": a.demote(handle), "Disable on B": b.disable(handle),
	} {
		if status.Code(err) != codes.Internal || !strings.Contains(err.Error(), "loops") {
			t.Errorf("%s on a looping chain: %v, want Internal naming the loop", name, err)
		}
	}
	_, err := a.node.NodeStageVolume(ctx, &csiapi.NodeStageVolumeRequest{VolumeId: handle, StagingTargetPath: "/s", Secrets: a.secrets,
		VolumeCapability: mountCapability("")})
	wantCode(t, "NodeStage on a looping chain", err, codes.Internal)
}

// A secret that marks no cluster local keeps the old behaviour: Demote acts
// on the chain's end.
func TestASecretWithoutLocalClustersKeepsTheOldBehaviour(t *testing.T) {
	w, _, _, handle, clone := failedOver(t)
	legacy := w.newDriver(clusterA, "a1", w.secret())
	if err := legacy.demote(handle); err != nil {
		t.Fatal(err)
	}
	if v := w.volume(clone); v.State != chain.Demoted {
		t.Errorf("with no local cluster Demote left the end B:v2 %s; the old behaviour demotes the end", v.State)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func mountCapability(fsType string) *csiapi.VolumeCapability {
	return &csiapi.VolumeCapability{AccessType: &csiapi.VolumeCapability_Mount{Mount: &csiapi.VolumeCapability_MountVolume{FsType: fsType}},
		AccessMode: &csiapi.VolumeCapability_AccessMode{Mode: csiapi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
}

// Every replication RPC takes the volume's lock and answers Aborted while
// another operation on the volume runs.
func TestABusyVolumeIsAborted(t *testing.T) {
	w := newWorld(t)
	a, _ := w.twoDrivers()
	handle := a.create(t, "pvc-busy")
	w.must(a.services.Replication.Locks.TryAcquire(handle))
	wantCode(t, "Demote while the volume is busy", a.demote(handle), codes.Aborted)
	_, err := a.controller.CreateSnapshot(ctx, &csiapi.CreateSnapshotRequest{Name: "s", SourceVolumeId: handle, Secrets: a.secrets})
	wantCode(t, "CreateSnapshot while the volume is busy", err, codes.Aborted)
	a.services.Replication.Locks.Release(handle)
	if err := a.demote(handle); err != nil {
		t.Fatalf("Demote once the volume is free: %v", err)
	}
}

// Enable on the surviving site while the chain's end lives on the site that
// is cut off succeeds with nothing done: the csi-addons controller calls
// Promote only after Enable succeeded, so an Unavailable would keep the
// fail-over from happening for as long as the other site stays away. The
// Promote that follows makes this site's clone the end, and that one ships.
func TestEnableWhileTheEndsSiteIsCutOffLetsTheFailoverProceed(t *testing.T) {
	w, _, b, handle, clone := failedOver(t) // Enable on B succeeded while A was cut off
	if err := b.enable(handle); err != nil {
		t.Fatalf("Enable on B of its own Active end: %v", err)
	}
	w.run(2 * time.Minute)
	st, err := w.api(clusterB).Status(ctx, clone)
	if err != nil || st.Target != clusterA || st.LastSyncTime.IsZero() {
		t.Fatalf("B's clone after the fail-over and the heal: %+v, %v; want it shipping to A", st, err)
	}
}

// Enable whose site's own cluster does not answer is Unavailable -- the
// controller calls it again -- never a success that leaves the volume
// unreplicated for ever.
func TestEnableIsUnavailableWhileTheEndsOwnClusterDoesNotAnswer(t *testing.T) {
	w := newWorld(t)
	a, _ := w.twoDrivers()
	handle := a.create(t, "pvc-gitea")
	w.servers[clusterA].Cut()
	wantCode(t, "Enable on A while A's storage API does not answer", a.enable(handle), codes.Unavailable)
	w.servers[clusterA].Heal()
	if err := a.enable(handle); err != nil {
		t.Fatalf("Enable on A once its storage API answers again: %v", err)
	}
	root, _ := chain.ParseRef(handle)
	if st, err := w.api(clusterA).Status(ctx, root); err != nil || st.Target != clusterB {
		t.Fatalf("A:v1 after Enable: %+v, %v; want it aimed at B", st, err)
	}
}
