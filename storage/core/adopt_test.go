package core_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/placement"
)

// forget replaces the volume's record by one that keeps no DRBD values, as
// a store restored from a backup or converted from another control plane
// does.
func forget(t *testing.T, s *core.Site, v core.Volume) {
	t.Helper()
	if err := s.Store().PutVolume(v.WithoutDRBDValues()); err != nil {
		t.Fatal(err)
	}
}

// running is what a node of v's resource finds: its thin dataset with DRBD
// metadata, and the configuration the kernel runs.
func running(v core.Volume) core.Found {
	config := backend.ResourceConfig{Name: v.Dataset(), Port: v.Allocation.Port, Minor: v.Allocation.Minor}
	for _, r := range v.Allocation.Replicas {
		config.Nodes = append(config.Nodes, backend.ResourceNode{Node: r.Node, NodeID: r.NodeID, Volume: v.Dataset()})
	}
	return core.Found{Volume: backend.VolumeInfo{Name: v.Dataset(), SizeBytes: v.SizeBytes, Provisioning: backend.Thin},
		HasMetadata: true, Live: &config}
}

// TestAStoreThatLostItsDRBDValuesAdoptsTheLiveOnes: a volume whose record
// lost its port, minor and node-ids is undecided -- every call on it, and
// every new volume, answers ErrAdopting, and none is created anew -- until
// Adopt reads what the nodes run: the kernel's values are recorded
// unchanged, the volume is initialized, and a dataset the site has no
// record of is refused, not provisioned.
func TestAStoreThatLostItsDRBDValuesAdoptsTheLiveOnes(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	shape := core.Shape{SizeBytes: 1 << 30, Provisioning: backend.Thin, PlaceCount: 2, VolumeMode: core.Block}
	v := w.create(a, "db", shape)
	w.run(0)
	before := v.Allocation
	if len(before.Replicas) != 2 || before.Port == 0 {
		t.Fatalf("created with %+v, want two replicas and a port", before)
	}
	forget(t, a, v)

	if _, err := a.CreateVolume(core.CreateRequest{Name: "db", Shape: shape}); !errors.Is(err, core.ErrAdopting) {
		t.Fatalf("CreateVolume of the undecided volume: %v, want ErrAdopting", err)
	}
	if _, err := a.CreateVolume(core.CreateRequest{Name: "new", Shape: shape}); !errors.Is(err, core.ErrAdopting) {
		t.Fatalf("CreateVolume of a new volume while one is undecided: %v, want ErrAdopting", err)
	}
	if _, err := a.Attach(v.Ref, before.Replicas[0].Node); !errors.Is(err, core.ErrAdopting) {
		t.Fatalf("Attach of the undecided volume: %v, want ErrAdopting", err)
	}

	stray := core.Found{Volume: backend.VolumeInfo{Name: "vol-stray", SizeBytes: 1 << 20, Provisioning: backend.Thin}, HasMetadata: true}
	var inventories []core.Inventory
	for i, r := range before.Replicas {
		inv := core.Inventory{Node: r.Node, Provisioning: backend.Thin, Found: []core.Found{running(v)}}
		if i == 0 {
			inv.Found = append(inv.Found, stray)
		}
		inventories = append(inventories, inv)
	}
	report, err := a.Adopt(inventories)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Adopted) != 1 || report.Adopted[0].Ref != v.Ref || len(report.Undecided) != 0 {
		t.Fatalf("adopted %+v, undecided %v; want %s alone", report.Adopted, report.Undecided, v.Ref)
	}
	if len(report.Refused) != 1 || report.Refused[0].Dataset != "vol-stray" || !errors.Is(report.Refused[0].Err, placement.ErrWouldReprovision) {
		t.Fatalf("refused %+v, want vol-stray as ErrWouldReprovision", report.Refused)
	}
	adoption := report.Adopted[0].Adoption
	for _, r := range before.Replicas {
		if !adoption.Has(r.Node, placement.ActionAdoptMetadata) || adoption.Has(r.Node, placement.ActionCreateMetadata) {
			t.Errorf("%s: decisions %v, want its metadata adopted", r.Node, adoption.Decisions)
		}
	}
	if adoption.Has("", placement.ActionHoldTopUp) || adoption.Has("", placement.ActionAllocate) {
		t.Errorf("decisions %v: nothing is allocated or topped up", adoption.Decisions)
	}
	if !strings.Contains(report.String(), "adopted "+string(v.Ref.Volume)) || !strings.Contains(report.String(), "refused vol-stray") {
		t.Errorf("the report says:\n%s", report)
	}

	got, err := a.Volume(v.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Allocation, before) || !got.Initialized || got.Undecided() {
		t.Fatalf("adopted record %+v initialized %v, want %+v initialized", got.Allocation, got.Initialized, before)
	}
	again, err := a.CreateVolume(core.CreateRequest{Name: "db", Shape: shape})
	if err != nil || again.Ref != v.Ref {
		t.Fatalf("CreateVolume once adopted: %v %v, want the same volume %s", again.Ref, err, v.Ref)
	}
}

// TestAdoptionDecidesNothingItCannotSee: a volume no node reports stays
// undecided and is refused as data not found; nothing is allocated for it.
func TestAdoptionDecidesNothingItCannotSee(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := w.create(a, "files", core.Shape{SizeBytes: 1 << 30, Provisioning: backend.Thin, PlaceCount: 2, VolumeMode: core.Filesystem})
	forget(t, a, v)
	report, err := a.Adopt([]core.Inventory{{Node: "node-1"}, {Node: "node-2"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Adopted) != 0 || len(report.Undecided) != 1 || len(report.Refused) != 1 ||
		!errors.Is(report.Refused[0].Err, placement.ErrDataNotFound) {
		t.Fatalf("report %+v, want the volume refused and undecided", report)
	}
	if undecided, err := a.Undecided(); err != nil || len(undecided) != 1 || undecided[0] != v.Ref {
		t.Fatalf("Undecided: %v %v", undecided, err)
	}
}

// TestAVolumeWithoutDRBDIsDecided: a btrfs site runs no DRBD (one replica
// per site), so its volume's record names its node but no resource, port or
// minor. Only a record marked pending (WithoutDRBDValues) is undecided: this
// one is not, and CreateVolume and Attach on the site go on as ever.
// Inferring undecided from port 0 answered ErrAdopting to every call there.
func TestAVolumeWithoutDRBDIsDecided(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	shape := core.Shape{SizeBytes: 1 << 30, Provisioning: backend.Thin, PlaceCount: 1, VolumeMode: core.Filesystem}
	v := w.create(a, "files", shape)
	v.Allocation.Resource, v.Allocation.Port, v.Allocation.Minor = "", 0, 0
	w.must(a.Store().PutVolume(v))

	if undecided, err := a.Undecided(); err != nil || len(undecided) != 0 {
		t.Errorf("Undecided: %v %v, want none", undecided, err)
	}
	if again, err := a.CreateVolume(core.CreateRequest{Name: "files", Shape: shape}); err != nil || again.Ref != v.Ref {
		t.Errorf("CreateVolume of the volume again: %v %v, want %s", again.Ref, err, v.Ref)
	}
	if _, err := a.CreateVolume(core.CreateRequest{Name: "more", Shape: shape}); err != nil {
		t.Errorf("CreateVolume of a new volume: %v", err)
	}
	if attached, err := a.Attach(v.Ref, v.Allocation.Replicas[0].Node); err != nil || attached.Primary != v.Allocation.Replicas[0].Node {
		t.Errorf("Attach to its node: primary %q, %v", attached.Primary, err)
	}
}
