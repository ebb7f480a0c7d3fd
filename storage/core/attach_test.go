package core_test

import (
	"errors"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/core"
)

func TestAttachMovesThePrimaryToAReplicaNodeOnly(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := w.create(a, "db", core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Filesystem})
	other := "a1"
	if v.Primary == other {
		other = "a2"
	}
	moved, err := a.Attach(v.Ref, other)
	w.must(err)
	if moved.Primary != other || moved.Home != v.Home {
		t.Fatalf("after Attach(%s): primary %s home %s; want primary %s, home unchanged %s", other, moved.Primary, moved.Home, other, v.Home)
	}
	again, err := a.Attach(v.Ref, other)
	if err != nil || again.Primary != other {
		t.Fatalf("repeated Attach: %s, %v", again.Primary, err)
	}
	spec, err := a.Spec(other)
	w.must(err)
	if len(spec.Volumes) != 1 || spec.Volumes[0].Role.String() != "Primary" {
		t.Fatalf("spec of %s: %+v, want the volume as Primary", other, spec.Volumes)
	}
	if _, err := a.Attach(v.Ref, "b1"); !errors.Is(err, core.ErrNotPlaced) {
		t.Fatalf("Attach to a node without a replica: %v, want ErrNotPlaced", err)
	}
}

func TestAttachRefusesAFencedMember(t *testing.T) {
	w := newWorld(t)
	v := createDemoted(w)
	a := w.sites[clusterA]
	if _, err := a.Attach(v.Ref, v.Home); !errors.Is(err, core.ErrNotActive) {
		t.Fatalf("Attach of a demoted member: %v, want ErrNotActive", err)
	}
}

func TestRecordFilesystemIsRemembered(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := w.create(a, "db", core.Shape{SizeBytes: 1 << 30, PlaceCount: 1, VolumeMode: core.Filesystem})
	w.must(a.RecordFilesystem(v.Ref, "xfs"))
	got, _ := a.Volume(v.Ref)
	if got.FsFound != "xfs" {
		t.Fatalf("FsFound = %q, want xfs", got.FsFound)
	}
	if err := a.RecordFilesystem(v.Ref, ""); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("recording no filesystem: %v, want ErrInvalid", err)
	}
}

func TestCapacityCountsWhatIsPromised(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	before, err := a.Capacity(2)
	w.must(err)
	if before != 100<<30 {
		t.Fatalf("capacity of two empty 100 GiB nodes for 2 replicas: %d", before)
	}
	w.create(a, "db", core.Shape{SizeBytes: 10 << 30, PlaceCount: 1, VolumeMode: core.Block})
	w.run(time.Second)
	one, _ := a.Capacity(1)
	two, _ := a.Capacity(2)
	if one != 100<<30 || two != 90<<30 {
		t.Fatalf("after placing 10 GiB on one node: capacity(1)=%d capacity(2)=%d, want 100 GiB and 90 GiB", one, two)
	}
	if _, err := a.Capacity(0); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("capacity for 0 replicas: %v", err)
	}
	if three, _ := a.Capacity(3); three != 0 {
		t.Fatalf("capacity for 3 replicas on 2 nodes: %d, want 0", three)
	}
}
