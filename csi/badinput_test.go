package csi_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestBadInputIsRefusedWithTheSpecsCodesAndChangesNothing sends unknown
// clusters, malformed or missing secrets, unsupported
// capabilities and oversized requests through gRPC: each gets the code the
// specs name and a message saying what was wrong, never quoting a secret,
// and the sites are left as they were.
func TestBadInputIsRefusedWithTheSpecsCodesAndChangesNothing(t *testing.T) {
	w := newWorld(t)
	a, _ := w.twoDrivers()
	good := a.secrets
	stranger := "cccccccc-0000-4000-8000-00000000000c:cccccccc-0000-4000-8000-000000000001"
	badSecret := map[string]string{"clusters": `{"clusters":[{"cluster_id":"` + string(clusterA) + `","cluster_endpoint":"http://x","cluster_secret":"hunter2-secret","local":true}]}`}
	brokenSecret := map[string]string{"clusters": `{"clusters":[{"cluster_secret":"hunter2-secret"`}
	before, err := w.api(clusterA).Capacity(ctx, 1)
	w.must(err)

	create := func(mutate func(*csiapi.CreateVolumeRequest)) error {
		req := &csiapi.CreateVolumeRequest{Name: "pvc-bad", VolumeCapabilities: []*csiapi.VolumeCapability{mountCapability("")}, Secrets: good}
		mutate(req)
		_, err := a.controller.CreateVolume(ctx, req)
		return err
	}
	withMode := func(mode csiapi.VolumeCapability_AccessMode_Mode) *csiapi.VolumeCapability {
		c := mountCapability("")
		c.AccessMode.Mode = mode
		return c
	}
	block := &csiapi.VolumeCapability{AccessType: &csiapi.VolumeCapability_Block{Block: &csiapi.VolumeCapability_BlockVolume{}},
		AccessMode: &csiapi.VolumeCapability_AccessMode{Mode: csiapi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}
	promote := func(src *replication.ReplicationSource, secrets map[string]string) error {
		_, err := a.replication.PromoteVolume(ctx, &replication.PromoteVolumeRequest{ReplicationSource: src, Secrets: secrets})
		return err
	}
	stage := func(handle string, secrets map[string]string) error {
		_, err := a.node.NodeStageVolume(ctx, &csiapi.NodeStageVolumeRequest{VolumeId: handle, StagingTargetPath: "/s",
			VolumeCapability: mountCapability(""), Secrets: secrets})
		return err
	}
	tests := []struct {
		name string
		err  error
		code codes.Code
		says string
	}{
		{"no replication source", promote(nil, good), codes.InvalidArgument, "replication_source is required"},
		{"a volume group", promote(&replication.ReplicationSource{Type: &replication.ReplicationSource_Volumegroup{
			Volumegroup: &replication.ReplicationSource_VolumeGroupSource{VolumeGroupId: "g"}}}, good), codes.InvalidArgument, "volume group"},
		{"unknown cluster (replication)", promote(source(stranger), good), codes.NotFound, "not in the clusters secret"},
		{"unknown cluster (node)", stage(stranger, good), codes.NotFound, "not in the clusters secret"},
		{"endpoint not https", promote(source(stranger), badSecret), codes.InvalidArgument, "must be an https:// URL"},
		{"secret not JSON", promote(source(stranger), brokenSecret), codes.InvalidArgument, "truncated"},
		{"no secret and no clusters file", promote(source(stranger), nil), codes.InvalidArgument, `no "clusters" key`},
		{"no name", create(func(r *csiapi.CreateVolumeRequest) { r.Name = "" }), codes.InvalidArgument, "name is required"},
		{"no capabilities", create(func(r *csiapi.CreateVolumeRequest) { r.VolumeCapabilities = nil }), codes.InvalidArgument, "capabilities are required"},
		{"multi-node writer", create(func(r *csiapi.CreateVolumeRequest) {
			r.VolumeCapabilities = []*csiapi.VolumeCapability{withMode(csiapi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)}
		}), codes.InvalidArgument, "MULTI_NODE_MULTI_WRITER is not supported"},
		{"unknown filesystem", create(func(r *csiapi.CreateVolumeRequest) {
			r.VolumeCapabilities = []*csiapi.VolumeCapability{mountCapability("btrfs")}
		}), codes.InvalidArgument, `filesystem "btrfs" is not supported`},
		{"block and mount", create(func(r *csiapi.CreateVolumeRequest) { r.VolumeCapabilities = append(r.VolumeCapabilities, block) }),
			codes.InvalidArgument, "both block and filesystem"},
		{"unknown parameter", create(func(r *csiapi.CreateVolumeRequest) { r.Parameters = map[string]string{"placecount": "2"} }),
			codes.InvalidArgument, `unknown parameter "placecount"`},
		{"bad placeCount", create(func(r *csiapi.CreateVolumeRequest) { r.Parameters = map[string]string{"placeCount": "two"} }),
			codes.InvalidArgument, "positive integer"},
		{"bad provisioning", create(func(r *csiapi.CreateVolumeRequest) { r.Parameters = map[string]string{"provisioning": "fat"} }),
			codes.InvalidArgument, "thin or thick"},
		{"unknown cluster parameter", create(func(r *csiapi.CreateVolumeRequest) {
			r.Parameters = map[string]string{"cluster": "cccccccc-0000-4000-8000-00000000000c"}
		}), codes.InvalidArgument, "not in the clusters secret"},
		{"limit below required", create(func(r *csiapi.CreateVolumeRequest) {
			r.CapacityRange = &csiapi.CapacityRange{RequiredBytes: 2 << 20, LimitBytes: 1 << 20}
		}), codes.OutOfRange, "holds no whole MiB"},
		{"too many replicas", create(func(r *csiapi.CreateVolumeRequest) { r.Parameters = map[string]string{"placeCount": "3"} }),
			codes.ResourceExhausted, "not enough capacity"},
		{"missing source snapshot", create(func(r *csiapi.CreateVolumeRequest) {
			r.VolumeContentSource = &csiapi.VolumeContentSource{Type: &csiapi.VolumeContentSource_Snapshot{
				Snapshot: &csiapi.VolumeContentSource_SnapshotSource{SnapshotId: "no-such-snapshot"}}}
		}), codes.NotFound, "malformed snapshot ID"},
		{"oversized request", create(func(r *csiapi.CreateVolumeRequest) { r.Name = strings.Repeat("x", 2<<20) }),
			codes.ResourceExhausted, "larger than max"},
	}
	for _, tt := range tests {
		st := status.Convert(tt.err)
		if st.Code() != tt.code || !strings.Contains(st.Message(), tt.says) {
			t.Errorf("%s: %s %q, want %s saying %q", tt.name, st.Code(), clipped(st.Message()), tt.code, tt.says)
		}
		if strings.Contains(st.Message(), "hunter2") || strings.Contains(st.Message(), w.servers[clusterA].Secret) {
			t.Errorf("%s: the message quotes a secret: %s", tt.name, st.Message())
		}
	}
	after, err := w.api(clusterA).Capacity(ctx, 1)
	w.must(err)
	snapshots, err := w.api(clusterA).ListSnapshots(ctx)
	w.must(err)
	if after != before || len(snapshots) != 0 {
		t.Errorf("refused requests changed site A: capacity %d -> %d, %d snapshots", before, after, len(snapshots))
	}
}

// TestAVolumeIDThatIsNoHandleIsNotFound: every RPC that reads a volume ID
// answers one that does not parse as a handle -- csi-sanity's made-up
// "fake-vol-id-..." -- NotFound, the spec's answer for a volume that does
// not exist (no volume can have that ID), saying why; DeleteVolume succeeds,
// as the spec asks of a volume that is gone. The other fields are valid, so
// only the ID can make the answer.
func TestAVolumeIDThatIsNoHandleIsNotFound(t *testing.T) {
	w := newWorld(t)
	a, _ := w.twoDrivers()
	const id = "fake-vol-id-0123456789"
	rpcs := volumeRPCs(a, id)
	for _, name := range slices.Sorted(maps.Keys(rpcs)) {
		st := status.Convert(rpcs[name])
		if st.Code() != codes.NotFound || !strings.Contains(st.Message(), `malformed volume handle "`+id+`"`) {
			t.Errorf("%s of %q: %s %q, want NotFound saying the ID is no volume handle", name, id, st.Code(), clipped(st.Message()))
		}
	}
	// The ID is looked at last: a request that also misses a field is
	// InvalidArgument, as csi-sanity expects of its made-up IDs.
	_, err := a.node.NodeUnpublishVolume(ctx, &csiapi.NodeUnpublishVolumeRequest{VolumeId: id})
	wantCode(t, "NodeUnpublishVolume of a made-up ID without a target path", err, codes.InvalidArgument)
	_, err = a.node.NodeStageVolume(ctx, &csiapi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: "/s", Secrets: a.secrets})
	wantCode(t, "NodeStageVolume of a made-up ID without a capability", err, codes.InvalidArgument)
	if _, err := a.controller.DeleteVolume(ctx, &csiapi.DeleteVolumeRequest{VolumeId: id, Secrets: a.secrets}); err != nil {
		t.Errorf("DeleteVolume of %q: %v, want success: no such volume is left", id, err)
	}
}

// volumeRPCs calls every RPC that reads a volume ID with id, the other
// fields valid, and returns their errors by RPC.
func volumeRPCs(a *driver, id string) map[string]error {
	secrets := a.secrets
	vol := source(id)
	capability := mountCapability("")
	capabilities := []*csiapi.VolumeCapability{capability}
	rpcs := map[string]error{}
	rpcs["ControllerExpandVolume"] = errOf(a.controller.ControllerExpandVolume(ctx, &csiapi.ControllerExpandVolumeRequest{VolumeId: id,
		CapacityRange: &csiapi.CapacityRange{RequiredBytes: 2 << 30}, Secrets: secrets}))
	rpcs["ValidateVolumeCapabilities"] = errOf(a.controller.ValidateVolumeCapabilities(ctx, &csiapi.ValidateVolumeCapabilitiesRequest{VolumeId: id,
		VolumeCapabilities: capabilities, Secrets: secrets}))
	rpcs["CreateSnapshot"] = errOf(a.controller.CreateSnapshot(ctx, &csiapi.CreateSnapshotRequest{Name: "snap", SourceVolumeId: id, Secrets: secrets}))
	rpcs["CreateVolume from a volume"] = errOf(a.controller.CreateVolume(ctx, &csiapi.CreateVolumeRequest{Name: "clone", VolumeCapabilities: capabilities,
		VolumeContentSource: &csiapi.VolumeContentSource{Type: &csiapi.VolumeContentSource_Volume{
			Volume: &csiapi.VolumeContentSource_VolumeSource{VolumeId: id}}}, Secrets: secrets}))
	rpcs["NodeStageVolume"] = errOf(a.node.NodeStageVolume(ctx, &csiapi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: "/s",
		VolumeCapability: capability, Secrets: secrets}))
	rpcs["NodeUnstageVolume"] = errOf(a.node.NodeUnstageVolume(ctx, &csiapi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: "/s"}))
	rpcs["NodePublishVolume"] = errOf(a.node.NodePublishVolume(ctx, &csiapi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: "/s",
		TargetPath: "/t", VolumeCapability: capability, Secrets: secrets}))
	rpcs["NodeUnpublishVolume"] = errOf(a.node.NodeUnpublishVolume(ctx, &csiapi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: "/t"}))
	rpcs["NodeGetVolumeStats"] = errOf(a.node.NodeGetVolumeStats(ctx, &csiapi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: "/t"}))
	rpcs["NodeExpandVolume"] = errOf(a.node.NodeExpandVolume(ctx, &csiapi.NodeExpandVolumeRequest{VolumeId: id, VolumePath: "/t", Secrets: secrets}))
	rpcs["EnableVolumeReplication"] = errOf(a.replication.EnableVolumeReplication(ctx, &replication.EnableVolumeReplicationRequest{
		ReplicationSource: vol, Secrets: secrets}))
	rpcs["DisableVolumeReplication"] = errOf(a.replication.DisableVolumeReplication(ctx, &replication.DisableVolumeReplicationRequest{
		ReplicationSource: vol, Secrets: secrets}))
	rpcs["PromoteVolume"] = errOf(a.replication.PromoteVolume(ctx, &replication.PromoteVolumeRequest{ReplicationSource: vol, Secrets: secrets}))
	rpcs["DemoteVolume"] = errOf(a.replication.DemoteVolume(ctx, &replication.DemoteVolumeRequest{ReplicationSource: vol, Secrets: secrets}))
	rpcs["ResyncVolume"] = errOf(a.replication.ResyncVolume(ctx, &replication.ResyncVolumeRequest{ReplicationSource: vol, Secrets: secrets}))
	rpcs["GetVolumeReplicationInfo"] = errOf(a.replication.GetVolumeReplicationInfo(ctx, &replication.GetVolumeReplicationInfoRequest{
		ReplicationSource: vol, Secrets: secrets}))
	return rpcs
}

// TestAVolumeNoClusterRecordsIsNotFound: a handle that parses but names no
// volume any cluster records -- one never made, one deleted, one on a
// cluster the secret does not name -- is NotFound, naming the volume, in
// every RPC whose spec lists "volume does not exist", as are malformed IDs
// (TestAVolumeIDThatIsNoHandleIsNotFound). NodePublishVolume of a volume not
// staged asks the clusters only then, and answers NotFound rather than "not
// staged" when they prove the volume gone. DeleteVolume succeeds, as the spec
// asks of a volume that is gone; so do NodeUnstageVolume and
// NodeUnpublishVolume, which ask no cluster and leave nothing mounted: the
// kubelet cleans a node up after the volume's deletion too.
func TestAVolumeNoClusterRecordsIsNotFound(t *testing.T) {
	w := newWorld(t)
	a, _ := w.twoDrivers()
	deleted := a.create(t, "pvc-gone")
	if _, err := a.controller.DeleteVolume(ctx, &csiapi.DeleteVolumeRequest{VolumeId: deleted, Secrets: a.secrets}); err != nil {
		t.Fatal(err)
	}
	never := string(clusterA) + ":aaaaaaaa-0000-4000-8000-0000000000ff"
	stranger := "cccccccc-0000-4000-8000-00000000000c:cccccccc-0000-4000-8000-000000000001"
	cleanups := map[string]bool{"NodeUnstageVolume": true, "NodeUnpublishVolume": true}
	for _, id := range []string{never, deleted, stranger} {
		rpcs := volumeRPCs(a, id)
		for _, name := range slices.Sorted(maps.Keys(rpcs)) {
			st := status.Convert(rpcs[name])
			switch {
			case cleanups[name] && st.Code() != codes.OK:
				t.Errorf("%s of %s: %s %q, want OK: nothing of it is mounted", name, id, st.Code(), clipped(st.Message()))
			case !cleanups[name] && (st.Code() != codes.NotFound || !strings.Contains(st.Message(), id)):
				t.Errorf("%s of %s: %s %q, want NotFound naming the volume", name, id, st.Code(), clipped(st.Message()))
			}
		}
		if _, err := a.controller.DeleteVolume(ctx, &csiapi.DeleteVolumeRequest{VolumeId: id, Secrets: a.secrets}); err != nil {
			t.Errorf("DeleteVolume of %s: %v, want success: no such volume is left", id, err)
		}
	}
}

// TestPublishingAVolumeNotStagedIsFailedPrecondition: a volume that exists,
// or that clusters which cannot be opened prove nothing of, published
// before it was staged is FailedPrecondition, the spec's answer for a
// publish before its stage -- not NotFound.
func TestPublishingAVolumeNotStagedIsFailedPrecondition(t *testing.T) {
	w := newWorld(t)
	a, _ := w.twoDrivers()
	handle := a.create(t, "pvc-unstaged")
	for _, secrets := range []map[string]string{a.secrets, nil} {
		_, err := a.node.NodePublishVolume(ctx, &csiapi.NodePublishVolumeRequest{VolumeId: handle, StagingTargetPath: "/s",
			TargetPath: "/t", VolumeCapability: mountCapability(""), Secrets: secrets})
		st := status.Convert(err)
		if st.Code() != codes.FailedPrecondition || !strings.Contains(st.Message(), "not staged") {
			t.Errorf("publishing %s before its stage (secrets %v): %s %q, want FailedPrecondition saying it is not staged",
				handle, secrets != nil, st.Code(), clipped(st.Message()))
		}
	}
}

// errOf is the error of a call's two results.
func errOf[T any](_ T, err error) error { return err }

func clipped(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
