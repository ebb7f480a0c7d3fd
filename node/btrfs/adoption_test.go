package btrfs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

const mib = 1 << 20

func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// state is everything a pool reports, to compare a pool before and after
// a restart.
type state struct {
	volumes   []backend.VolumeInfo
	snapshots map[string][]backend.SnapshotInfo
	content   map[string][]byte
}

func stateOf(t testing.TB, p backend.Pool) state {
	t.Helper()
	volumes, err := p.Volumes()
	must(t, err, "Volumes")
	s := state{volumes: volumes, snapshots: map[string][]backend.SnapshotInfo{}, content: map[string][]byte{}}
	for _, v := range volumes {
		s.snapshots[v.Name], err = p.Snapshots(v.Name)
		must(t, err, "Snapshots "+v.Name)
		s.content[v.Name] = pooltest.Content(t, p, v.Name)
	}
	return s
}

func filesystemUUID(t testing.TB, image string) string {
	t.Helper()
	out, err := exec.Output(exec.Local{}.Command(context.Background(), "blkid", "-p", "-o", "value", "-s", "UUID", image))
	must(t, err, "blkid "+image)
	return string(bytes.TrimSpace(out))
}

// TestAdoptionAfterRestart closes a pool and opens a new one over the same
// directory: it finds every volume, snapshot, clone, fence and byte, and the
// filesystem is the same one (blkid's UUID), never reformatted.
func TestAdoptionAfterRestart(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	p, err := New(Options{Dir: dir, SizeBytes: poolBytes})
	must(t, err, "New")
	must(t, p.CreateVolume("thin", 16*mib, backend.Thin), "create thin")
	must(t, p.CreateVolume("thick", 8*mib, backend.Thick), "create thick")
	pooltest.Write(t, p, "thin", 0, pooltest.Pattern(1, mib))
	must(t, p.Snapshot("thin", "s1"), "Snapshot s1")
	pooltest.Write(t, p, "thin", 3*mib, pooltest.Pattern(2, mib))
	must(t, p.Snapshot("thin", "s2"), "Snapshot s2")
	must(t, p.Clone("thin", "s1", "clone"), "Clone")
	pooltest.Write(t, p, "clone", 5*mib, pooltest.Pattern(3, mib))
	must(t, p.SetReadOnly("thick", true), "fence thick")
	before := stateOf(t, p)
	uuid := filesystemUUID(t, filepath.Join(dir, imageName))
	must(t, p.Close(), "Close")
	if leaked := loopDevicesUnder(t, dir); len(leaked) > 0 {
		t.Fatalf("Close left loop devices: %v", leaked)
	}

	again := newPoolIn(t, dir, 0)
	if got := filesystemUUID(t, filepath.Join(dir, imageName)); got != uuid {
		t.Fatalf("the filesystem's UUID went from %s to %s: the pool was reformatted", uuid, got)
	}
	after := stateOf(t, again)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("the adopted pool differs:\nbefore %+v %+v\nafter  %+v %+v", before.volumes, before.snapshots, after.volumes, after.snapshots)
	}
	dev, err := again.Open("thick")
	must(t, err, "Open the fenced volume")
	if _, err := dev.WriteAt([]byte{1}, 0); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("a write to a volume fenced before the restart: %v, want ErrRefused", err)
	}
	must(t, dev.Close(), "Close")
	if err := again.DestroySnapshot("thin", "s1"); !errors.Is(err, backend.ErrBusy) {
		t.Fatalf("the clone's origin after a restart: %v, want ErrBusy", err)
	}
}

// newPoolIn opens a pool in dir and closes it when the test ends, checking
// that no loop device under dir stays attached.
func newPoolIn(t testing.TB, dir string, sizeBytes uint64) *Pool {
	t.Helper()
	p, err := New(Options{Dir: dir, SizeBytes: sizeBytes})
	must(t, err, "New in "+dir)
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if leaked := loopDevicesUnder(t, dir); len(leaked) > 0 {
			t.Errorf("Close left loop devices attached: %v", leaked)
		}
	})
	return p
}

// TestAdoptionAfterCrash opens a second pool over a directory whose first
// pool never closed: the filesystem is still mounted and a volume's loop
// device still attached. The second pool adopts both, and its Close leaves
// nothing behind.
func TestAdoptionAfterCrash(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	crashed, err := New(Options{Dir: dir, SizeBytes: poolBytes})
	must(t, err, "New")
	must(t, crashed.CreateVolume("v", 8*mib, backend.Thin), "CreateVolume")
	data := pooltest.Pattern(4, mib)
	dev, err := crashed.Open("v")
	must(t, err, "Open")
	if _, err := dev.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	must(t, dev.Sync(), "Sync")
	// The process dies: its descriptors close, its loop devices and mount stay.
	must(t, dev.(*device).file.Close(), "closing the device's descriptor")
	must(t, crashed.attached["v"].control.Close(), "closing the pool's descriptor")
	if len(loopDevicesUnder(t, dir)) != 2 {
		t.Fatalf("want the pool's and the volume's loop devices attached, have %v", loopDevicesUnder(t, dir))
	}

	p := newPoolIn(t, dir, 0)
	if got := pooltest.Content(t, p, "v"); !bytes.Equal(got[:mib], data) {
		t.Fatal("the adopted volume lost its synced write")
	}
	must(t, p.DestroyVolume("v"), "destroy a volume whose loop device the crashed pool attached")
	if len(loopDevicesUnder(t, dir)) != 1 {
		t.Fatalf("after the destroy only the pool's loop device stays, have %v", loopDevicesUnder(t, dir))
	}
}

// TestRecoverAfterInterruptedOperations leaves behind what a crash in the
// middle of each multi-step operation leaves, and checks that New cleans it.
func TestRecoverAfterInterruptedOperations(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	p, err := New(Options{Dir: dir, SizeBytes: poolBytes})
	must(t, err, "New")
	must(t, p.CreateVolume("v", 8*mib, backend.Thin), "CreateVolume")
	pooltest.Write(t, p, "v", 0, pooltest.Pattern(5, mib))
	must(t, p.Snapshot("v", "s"), "Snapshot")
	content := pooltest.Content(t, p, "v")
	ctx := context.Background()
	// A volume half built in staging.
	stage, err := p.staging()
	must(t, err, "staging")
	must(t, p.btrfs.createSubvolume(ctx, filepath.Join(stage, headName)), "a staged head")
	// A head swap interrupted after the old head moved aside.
	must(t, p.btrfs.snapshot(ctx, p.layout.snapshot("v", "s"), filepath.Join(p.layout.volume("v"), headNew), false), "a new head")
	must(t, os.Rename(p.layout.head("v"), filepath.Join(p.layout.volume("v"), headOld)), "moving the old head")
	// A receive that did not finish: a writable subvolume among snapshots.
	must(t, p.btrfs.createSubvolume(ctx, p.layout.snapshot("v", "partial")), "a partial receive")
	must(t, p.Close(), "Close")

	again := newPoolIn(t, dir, 0)
	snapshots, err := again.Snapshots("v")
	if err != nil || len(snapshots) != 1 || snapshots[0].Name != "s" {
		t.Fatalf("after recovery v has snapshots %+v (%v), want s alone", snapshots, err)
	}
	if got := pooltest.Content(t, again, "v"); !bytes.Equal(got, content) {
		t.Fatal("after recovery v does not hold its snapshot's content")
	}
	for _, leftover := range []string{stage, filepath.Join(p.layout.volume("v"), headNew),
		filepath.Join(p.layout.volume("v"), headOld), p.layout.snapshot("v", "partial")} {
		if _, err := os.Lstat(leftover); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived the recovery (%v)", leftover, err)
		}
	}
}
