package csi

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// Rule 7 as a table: what the device carries, what the volume asks, what was
// recorded before.
func TestChooseFilesystem(t *testing.T) {
	tests := []struct {
		found, asked, recorded string
		format                 bool
		fsType                 string
		refused                bool
	}{
		{"xfs", "", "", false, "xfs", false},      // no opinion: mount what is there
		{"xfs", "", "xfs", false, "xfs", false},   // and what was recorded
		{"", "", "", true, "ext4", false},         // blank, no opinion: ext4
		{"", "xfs", "", true, "xfs", false},       // blank, named: that one
		{"xfs", "xfs", "", false, "xfs", false},   // named and carried
		{"xfs", "ext4", "", false, "", true},      // named, another carried: never reformatted
		{"ext4", "xfs", "ext4", false, "", true},  // likewise
		{"", "", "xfs", false, "", true},          // blank but it held xfs: never formatted
		{"", "ext4", "xfs", false, "", true},      // even when a filesystem is named
		{"ext4", "", "xfs", false, "ext4", false}, // what the device carries wins over the record
	}
	for _, tt := range tests {
		format, fsType, err := chooseFilesystem(tt.found, tt.asked, tt.recorded)
		if tt.refused {
			if !errors.Is(err, ErrFilesystemMismatch) || format {
				t.Errorf("found %q asked %q recorded %q: format=%v %v, want ErrFilesystemMismatch", tt.found, tt.asked, tt.recorded, format, err)
			}
			continue
		}
		if err != nil || format != tt.format || fsType != tt.fsType {
			t.Errorf("found %q asked %q recorded %q: format=%v %q %v, want format=%v %q", tt.found, tt.asked, tt.recorded, format, fsType, err, tt.format, tt.fsType)
		}
	}
}

func TestTheCodeTable(t *testing.T) {
	tests := []struct {
		err  error
		code codes.Code
	}{
		{fmt.Errorf("x: %w", core.ErrNotFound), codes.NotFound},
		{fmt.Errorf("x: %w", ErrNoVolume), codes.NotFound},
		{fmt.Errorf("x: %w", core.ErrPeerUnreachable), codes.FailedPrecondition},
		{fmt.Errorf("x: %w", core.ErrPeerPrimary), codes.FailedPrecondition},
		{fmt.Errorf("x: %w", core.ErrFinalSyncPending), codes.Unavailable}, // never forced: see codes.go
		{fmt.Errorf("x: %w: %w", chain.ErrUnreachable, context.DeadlineExceeded), codes.Unavailable},
		{fmt.Errorf("x: %w", chain.ErrCycle), codes.Internal},
		{fmt.Errorf("x: %w", ErrBusy), codes.Aborted},
		{fmt.Errorf("x: %w", core.ErrNoCapacity), codes.ResourceExhausted},
		{fmt.Errorf("x: %w", storageapi.ErrClusters), codes.InvalidArgument},
		{fmt.Errorf("x: %w", storageapi.ErrForbidden), codes.PermissionDenied},
		{errors.New("something else"), codes.Internal},
		{status.Error(codes.OutOfRange, "kept"), codes.OutOfRange},
	}
	for _, tt := range tests {
		st := status.Convert(toStatus(tt.err))
		if st.Code() != tt.code || st.Message() != status.Convert(tt.err).Message() && st.Message() != tt.err.Error() {
			t.Errorf("%v: %s %q, want %s with the error's message", tt.err, st.Code(), st.Message(), tt.code)
		}
	}
	if toStatus(nil) != nil {
		t.Error("toStatus(nil) is not nil")
	}
}

func TestLocksAreTriedNeverWaitedFor(t *testing.T) {
	var l Locks
	if err := l.TryAcquire("v"); err != nil {
		t.Fatal(err)
	}
	if err := l.TryAcquire("v"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a held lock: %v, want ErrBusy", err)
	}
	if err := l.TryAcquire("w"); err != nil {
		t.Fatalf("another volume's lock: %v", err)
	}
	l.Release("v")
	if err := l.TryAcquire("v"); err != nil {
		t.Fatalf("after release: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("releasing a lock not held did not panic")
		}
	}()
	l.Release("never")
}

// FuzzShapeOf: whatever a StorageClass's parameters and a capacity range
// hold, CreateVolume's reading of them refuses with InvalidArgument or
// OutOfRange or returns a shape the site accepts the form of.
func FuzzShapeOf(f *testing.F) {
	f.Add("placeCount", "2", "provisioning", "thick", int64(1<<30), int64(0))
	f.Add("placecount", "x", "cluster", "c", int64(-1), int64(5))
	f.Add("csi.storage.k8s.io/pvc/name", "p", "provisioning", "thin", int64(0), int64(1<<20))
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string, required, limit int64) {
		capabilities := []*csi.VolumeCapability{{AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER}}}
		shape, err := shapeOf(&csi.CapacityRange{RequiredBytes: required, LimitBytes: limit}, capabilities, map[string]string{k1: v1, k2: v2})
		if err != nil {
			if c := status.Code(err); c != codes.InvalidArgument && c != codes.OutOfRange {
				t.Fatalf("refused with %s: %v", c, err)
			}
			return
		}
		if shape.SizeBytes == 0 || shape.SizeBytes%sizeQuantumBytes != 0 || shape.PlaceCount < 1 ||
			(limit > 0 && shape.SizeBytes > uint64(limit)) || (required > 0 && shape.SizeBytes < uint64(required)) {
			t.Fatalf("accepted %+v for %d..%d", shape, required, limit)
		}
	})
}

func TestBlockChangeReadsAKernelUevent(t *testing.T) {
	for _, c := range []struct {
		message string
		want    bool
	}{
		{"change@/devices/virtual/block/loop3\x00ACTION=change\x00DEVPATH=/devices/virtual/block/loop3\x00SUBSYSTEM=block\x00RESIZE=1\x00", true},
		{"change@/devices/virtual/block/loop3\x00SUBSYSTEM=block\x00", true},
		{"add@/devices/virtual/block/loop3\x00ACTION=add\x00SUBSYSTEM=block\x00", false},
		{"change@/devices/virtual/net/lo\x00ACTION=change\x00SUBSYSTEM=net\x00", false},
		{"change@/devices/x\x00SUBSYSTEM=blockish\x00", false},
		{"", false},
	} {
		if got := blockChange([]byte(c.message)); got != c.want {
			t.Errorf("blockChange(%q) = %v, want %v", c.message, got, c.want)
		}
	}
}
