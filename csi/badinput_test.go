package csi_test

import (
	"strings"
	"testing"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/replication"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestBadInputIsRefusedWithTheSpecsCodesAndChangesNothing sends malformed
// handles, unknown clusters, malformed or missing secrets, unsupported
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
		{"malformed handle (replication)", promote(source("A:v1"), good), codes.InvalidArgument, "malformed volume handle"},
		{"no replication source", promote(nil, good), codes.InvalidArgument, "replication_source is required"},
		{"a volume group", promote(&replication.ReplicationSource{Type: &replication.ReplicationSource_Volumegroup{
			Volumegroup: &replication.ReplicationSource_VolumeGroupSource{VolumeGroupId: "g"}}}, good), codes.InvalidArgument, "volume group"},
		{"unknown cluster (replication)", promote(source(stranger), good), codes.NotFound, "not in the clusters secret"},
		{"unknown cluster (node)", stage(stranger, good), codes.NotFound, "not in the clusters secret"},
		{"malformed handle (node)", stage("x:y", good), codes.InvalidArgument, "malformed volume handle"},
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

func clipped(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
