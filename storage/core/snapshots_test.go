package core_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storage/core/coretest"
)

func TestParseSnapshotRef(t *testing.T) {
	const good = "aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001@a0000000-0000-4000-8000-000000000002"
	ref, err := core.ParseSnapshotRef(good)
	if err != nil || ref.String() != good || ref.Name() != "csi-a0000000-0000-4000-8000-000000000002" {
		t.Fatalf("ParseSnapshotRef(good) = %+v, %v", ref, err)
	}
	for _, bad := range []string{"", "@", good[:len(good)-1], strings.Replace(good, "@", ":", 1),
		"x" + good, good + "@x", strings.ToUpper(good), strings.Repeat("@", 500)} {
		got, err := core.ParseSnapshotRef(bad)
		if !errors.Is(err, core.ErrMalformedSnapshotRef) || got != (core.SnapshotRef{}) || len(err.Error()) > 300 {
			t.Errorf("ParseSnapshotRef(%.40q) = %+v, %v; want a short ErrMalformedSnapshotRef", bad, got, err)
		}
	}
}

func FuzzParseSnapshotRef(f *testing.F) {
	f.Add("aaaaaaaa-0000-4000-8000-00000000000a:a0000000-0000-4000-8000-000000000001@a0000000-0000-4000-8000-000000000002")
	f.Add("a:b@c")
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := core.ParseSnapshotRef(s)
		if err != nil {
			if !errors.Is(err, core.ErrMalformedSnapshotRef) || ref != (core.SnapshotRef{}) {
				t.Fatalf("ParseSnapshotRef(%q) = %+v, %v", s, ref, err)
			}
			return
		}
		if ref.String() != s {
			t.Fatalf("ParseSnapshotRef(%q).String() = %q: one snapshot, one spelling", s, ref.String())
		}
	})
}

func TestASnapshotIsTakenOnTheHomeNodeAndIsIdempotentByName(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	v := w.create(a, "db", core.Shape{SizeBytes: 1 << 30, PlaceCount: 2, VolumeMode: core.Filesystem})
	snap, err := a.CreateSnapshot(v.Ref, "snap-1")
	w.must(err)
	if snap.Ready || snap.Ref.Member != v.Ref || snap.Root != v.Ref {
		t.Fatalf("a fresh snapshot %+v: want it of %s and not ready before the node took it", snap, v.Ref)
	}
	w.run(2 * time.Second)
	again, err := a.CreateSnapshot(v.Ref, "snap-1")
	if err != nil || again.Ref != snap.Ref || !again.Ready || again.GUID == "" {
		t.Fatalf("repeat after the node took it: %+v, %v; want %s ready with a GUID", again, err, snap.Ref)
	}
	home := w.node(clusterA, v.Home).Datasets[v.Dataset()]
	if len(home) != 1 || home[0].Name != snap.Ref.Name() {
		t.Fatalf("home node holds %v, want only %s", home, snap.Ref.Name())
	}
	other := w.create(a, "other", core.Shape{SizeBytes: 1 << 20, PlaceCount: 1, VolumeMode: core.Block})
	if _, err := a.CreateSnapshot(other.Ref, "snap-1"); !errors.Is(err, core.ErrExists) {
		t.Fatalf("the same name of another volume: %v, want ErrExists", err)
	}
	list, err := a.ListSnapshots()
	if err != nil || len(list) != 1 || list[0].Ref != snap.Ref {
		t.Fatalf("ListSnapshots = %+v, %v; want the one snapshot", list, err)
	}
}

func TestADeletedSnapshotIsDestroyedOnceNoCloneDependsOnIt(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	shape := core.Shape{SizeBytes: 1 << 30, PlaceCount: 1, VolumeMode: core.Filesystem}
	v := w.create(a, "db", shape)
	snap, err := a.CreateSnapshot(v.Ref, "snap-1")
	w.must(err)
	w.run(2 * time.Second)
	clone, err := a.CreateVolumeFrom(core.CreateRequest{Name: "restored", Shape: shape}, core.CloneSource{Snapshot: snap.Ref})
	w.must(err)
	if clone.Origin.Dataset != v.Dataset() || clone.Origin.Snapshot != snap.Ref.Name() || clone.Origin.GUID == "" ||
		clone.Primary != v.Home || clone.Generation != 0 || clone.Root != clone.Ref {
		t.Fatalf("clone %+v origin %+v: want a new root cloned from %s on the home node %s", clone.Member, clone.Origin, snap.Ref, v.Home)
	}
	repeat, err := a.CreateVolumeFrom(core.CreateRequest{Name: "restored", Shape: shape}, core.CloneSource{Snapshot: snap.Ref})
	if err != nil || repeat.Ref != clone.Ref {
		t.Fatalf("repeated clone: %s, %v; want %s", repeat.Ref, err, clone.Ref)
	}
	if _, err := a.CreateVolumeFrom(core.CreateRequest{Name: "restored", Shape: shape}, core.CloneSource{Volume: v.Ref}); !errors.Is(err, core.ErrExists) {
		t.Fatalf("the same name from another source: %v, want ErrExists", err)
	}
	w.must(a.DeleteSnapshot(snap.Ref))
	w.must(a.DeleteSnapshot(snap.Ref)) // idempotent
	w.run(2 * time.Second)
	if list, _ := a.ListSnapshots(); len(list) != 0 {
		t.Fatalf("a deleted snapshot is listed: %+v", list)
	}
	if !holds(w.node(clusterA, v.Home), v.Dataset(), snap.Ref.Name()) {
		t.Fatal("the snapshot a live clone depends on was destroyed")
	}
	w.must(a.DeleteVolume(clone.Ref))
	w.run(3 * time.Second)
	if holds(w.node(clusterA, v.Home), v.Dataset(), snap.Ref.Name()) {
		t.Fatal("the deleted snapshot outlived its last clone")
	}
	w.must(a.DeleteSnapshot(snap.Ref)) // the record is purged on the next write; still success
}

func TestAVolumeCloneSnapshotsItsSourceAndRefusesToShrink(t *testing.T) {
	w := newWorld(t)
	a := w.sites[clusterA]
	shape := core.Shape{SizeBytes: 1 << 30, PlaceCount: 1, VolumeMode: core.Block}
	v := w.create(a, "src", shape)
	small := shape
	small.SizeBytes = 1 << 20
	if _, err := a.CreateVolumeFrom(core.CreateRequest{Name: "small", Shape: small}, core.CloneSource{Volume: v.Ref}); !errors.Is(err, core.ErrInvalid) {
		t.Fatalf("a clone smaller than its source: %v, want ErrInvalid", err)
	}
	clone, err := a.CreateVolumeFrom(core.CreateRequest{Name: "copy", Shape: shape}, core.CloneSource{Volume: v.Ref})
	w.must(err)
	w.run(2 * time.Second)
	if !holds(w.node(clusterA, v.Home), v.Dataset(), clone.Origin.Snapshot) {
		t.Fatalf("the snapshot %s a volume clone starts from was not taken", clone.Origin.Snapshot)
	}
	if list, _ := a.ListSnapshots(); len(list) != 0 {
		t.Fatalf("a clone's own snapshot is listed as a user snapshot: %+v", list)
	}
	if _, err := a.CreateVolumeFrom(core.CreateRequest{Name: "x", Shape: shape},
		core.CloneSource{Snapshot: core.SnapshotRef{Member: v.Ref, Snapshot: "a0000000-0000-4000-8000-000000000999"}}); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a clone of a missing snapshot: %v, want ErrNotFound", err)
	}
}

func TestOnlyTheActiveEndIsSnapshotted(t *testing.T) {
	w := newWorld(t)
	v := createDemoted(w)
	a := w.sites[clusterA]
	if _, err := a.CreateSnapshot(v.Ref, "late"); !errors.Is(err, core.ErrNotActive) {
		t.Fatalf("a snapshot of a demoted member: %v, want ErrNotActive", err)
	}
	if _, err := a.CreateSnapshot(chain.Ref{Cluster: clusterB, Volume: v.Ref.Volume}, "x"); !errors.Is(err, core.ErrNotLocal) {
		t.Fatalf("a snapshot of another site's member: %v, want ErrNotLocal", err)
	}
}

func holds(n *coretest.Node, dataset, snapshot string) bool {
	for _, s := range n.Datasets[dataset] {
		if s.Name == snapshot {
			return true
		}
	}
	return false
}
