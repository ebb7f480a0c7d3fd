package daemon_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/internal/metrictest"
	"github.com/baton-dr/baton/node/btrfs"
	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
	"github.com/baton-dr/baton/storage/core"
)

var ctx = context.Background()

// reported waits until the site records node name with its pool's size and
// its stream address.
func (w *world) reported(s *testSite, n *testNode) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("%s reports to %s", n.name, s.id), func() error {
		record, ok := s.node(n.name)
		if !ok || record.Usage.SizeBytes == 0 || record.Address == "" {
			return fmt.Errorf("node record %+v (found %v)", record, ok)
		}
		return nil
	}, n)
}

// createVolume creates a volume through the site's HTTPS API and waits until
// the node made it, reported it, and linked its device.
func (w *world) createVolume(s *testSite, n *testNode, name string, sizeBytes uint64) (core.Volume, string) {
	w.t.Helper()
	v, err := s.client.CreateVolume(ctx, core.CreateRequest{Name: name, Shape: core.Shape{SizeBytes: sizeBytes,
		Provisioning: backend.Thin, PlaceCount: 1, VolumeMode: core.Block}})
	if err != nil {
		w.t.Fatalf("CreateVolume: %v", err)
	}
	var device string
	w.eventually(fmt.Sprintf("%s holds %s", n.name, v.Dataset()), func() error {
		record, err := s.volume(v.Ref)
		switch {
		case err != nil:
			return err
		case !slices.Contains(record.Present, n.name) || !record.Initialized:
			return fmt.Errorf("present on %v, initialized %v", record.Present, record.Initialized)
		}
		device, err = n.link(v.Dataset())
		return err
	}, n)
	return v, device
}

// TestTheNodeCreatesAndReportsAVolume: a volume created through the site's
// storage API is made on the node's btrfs pool by the daemon, reported (the
// site records it present and initialized), and linked to a loop device that
// shows the volume's file.
func TestTheNodeCreatesAndReportsAVolume(t *testing.T) {
	w := newWorld(t, clusterA)
	a := w.site(clusterA)
	n := w.startNode(a, "n1", tempDir(t))
	w.reported(a, n)
	v, device := w.createVolume(a, n, "pvc-1", 64*mib)

	info, err := n.pool.Volume(v.Dataset())
	if err != nil || info.SizeBytes < 64*mib {
		t.Fatalf("the pool's %s: %+v %v, want a volume of 64 MiB", v.Dataset(), info, err)
	}
	devices, err := loop.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(devices, func(d loop.Device) bool { return d.Name == device })
	if i < 0 || !strings.Contains(devices[i].BackFile, "/volumes/"+v.Dataset()+"/head/data") {
		t.Fatalf("the link of %s points at %s, which shows %+v", v.Dataset(), device, devices)
	}
	if got := metrictest.Value(t, n.registry, "baton_node_passes_total", map[string]string{"result": "reconciled"}); got < 1 {
		t.Fatalf("baton_node_passes_total{result=reconciled} is %v", got)
	}

	if err := a.client.DeleteVolume(ctx, v.Ref); err != nil {
		t.Fatalf("DeleteVolume: %v", err)
	}
	w.eventually("the deleted volume is destroyed and unlinked", func() error {
		if _, err := a.volume(v.Ref); !errors.Is(err, core.ErrNotFound) {
			return fmt.Errorf("the record: %v", err)
		}
		if _, err := n.pool.Volume(v.Dataset()); !errors.Is(err, backend.ErrNotFound) {
			return fmt.Errorf("the pool's volume: %v", err)
		}
		if _, err := n.link(v.Dataset()); err == nil {
			return errors.New("the link stays")
		}
		return nil
	}, n)
	if err := n.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	assertNothingLeft(t, n.poolDir)
}

// TestASnapshotShipsToTheOtherSiteOverTLS: Enable on site A makes A's node
// snapshot the volume and ship it over node/stream's TLS to site B's node,
// whose replica records the snapshot under the GUID A's node took it with; a
// fail-over on B clones it, and the clone holds the bytes written on A.
func TestASnapshotShipsToTheOtherSiteOverTLS(t *testing.T) {
	w := newWorld(t, clusterA, clusterB)
	a, b := w.site(clusterA), w.site(clusterB)
	na := w.startNode(a, "n1", tempDir(t))
	nb := w.startNode(b, "n1", tempDir(t))
	w.reported(a, na)
	w.reported(b, nb)
	v, device := w.createVolume(a, na, "pvc-1", 64*mib)
	data := pooltest.Pattern(42, 4*mib)
	writeDevice(t, device, mib, data)

	if err := a.client.Enable(ctx, v.Ref, clusterB); err != nil {
		t.Fatalf("Enable: %v", err)
	}
	var shipped core.Pairing
	var received core.Replica
	w.eventually("the first snapshot lands on B and A hears of it", func() error {
		p, found := a.pairing(v.Ref)
		if !found || p.Last.Snapshot == "" {
			return fmt.Errorf("A's pairing %+v (found %v)", p, found)
		}
		r, found := b.replica(v.Ref)
		if !found || len(r.Received["n1"]) == 0 {
			return fmt.Errorf("B's replica %+v (found %v)", r, found)
		}
		shipped, received = p, r
		return nil
	}, na, nb)
	sourceSnaps, err := na.pool.Snapshots(v.Dataset())
	if err != nil {
		t.Fatal(err)
	}
	got := received.Received["n1"][0]
	if i := slices.IndexFunc(sourceSnaps, func(s backend.SnapshotInfo) bool { return s.Name == got.Name }); i < 0 || sourceSnaps[i].GUID != got.GUID {
		t.Fatalf("B received %+v; A's node holds %+v", got, sourceSnaps)
	}
	sent, _ := na.daemon.StreamStats()
	_, took := nb.daemon.StreamStats()
	if sent.Bytes == 0 || took.Bytes != sent.Bytes || shipped.Last.Bytes != sent.Bytes {
		t.Fatalf("A's client wrote %d body bytes, B's server read %d, the pairing recorded %d", sent.Bytes, took.Bytes, shipped.Last.Bytes)
	}
	t.Logf("snapshot %s of a 64 MiB volume holding 4 MiB shipped in %d stream bytes (%s)",
		got.Name, shipped.Last.Bytes, shipped.Last.Duration)

	clone, err := b.client.Failover(ctx, v.Ref, true)
	if err != nil {
		t.Fatalf("Failover on B: %v", err)
	}
	var cloneDevice string
	w.eventually("B's node clones the received snapshot and links it", func() error {
		record, err := b.volume(clone.Ref)
		if err != nil || !slices.Contains(record.Present, "n1") {
			return fmt.Errorf("the clone's record %+v: %v", record.Present, err)
		}
		cloneDevice, err = nb.link(clone.Dataset())
		return err
	}, na, nb)
	if got := readDevice(t, cloneDevice, mib, len(data)); !bytes.Equal(got, data) {
		t.Fatal("the clone of B's received snapshot does not hold what was written on A")
	}
	if zeros := readDevice(t, cloneDevice, 0, mib); !bytes.Equal(zeros, make([]byte, mib)) {
		t.Fatal("the clone holds data where nothing was written")
	}
}

// TestARestartAdoptsAndNeverRecreates: a daemon started over the pool a
// stopped one left finds the volume, its bytes and its snapshot; one whose
// volume vanished while it was down reports it gone and does not make an
// empty one.
func TestARestartAdoptsAndNeverRecreates(t *testing.T) {
	w := newWorld(t, clusterA)
	a := w.site(clusterA)
	dir := tempDir(t)
	first := w.startNode(a, "n1", dir)
	w.reported(a, first)
	v, device := w.createVolume(a, first, "pvc-1", 32*mib)
	data := pooltest.Pattern(7, mib)
	writeDevice(t, device, 0, data)
	if _, err := a.client.CreateSnapshot(ctx, v.Ref, "snap-1"); err != nil {
		t.Fatal(err)
	}
	w.eventually("the snapshot is taken", func() error {
		record, err := a.volume(v.Ref)
		if err != nil || len(record.Snapshots) == 0 {
			return fmt.Errorf("snapshots %v: %v", record.Snapshots, err)
		}
		return nil
	}, first)
	before, err := first.pool.Snapshots(v.Dataset())
	if err != nil {
		t.Fatal(err)
	}
	if err := first.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	assertNothingLeft(t, dir)

	second := w.startNode(a, "n1", dir)
	var after []backend.SnapshotInfo
	w.eventually("the restarted node links the volume again", func() error {
		device, err = second.link(v.Dataset())
		if err != nil {
			return err
		}
		after, err = second.pool.Snapshots(v.Dataset())
		return err
	}, second)
	if !slices.Equal(before, after) {
		t.Fatalf("snapshots before the restart %+v, after %+v", before, after)
	}
	if got := readDevice(t, device, 0, len(data)); !bytes.Equal(got, data) {
		t.Fatal("after the restart the volume does not hold what was written: it was re-created")
	}
	if err := second.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}

	// The volume vanishes while no agent runs.
	third := vanish(t, w, a, dir, v.Dataset())
	w.eventually("the node reports the vanished volume", func() error {
		if trouble := third.lastTrouble(); !strings.Contains(trouble, "refusing to provision it empty") {
			return errors.New(trouble)
		}
		return nil
	}, third)
	if _, err := third.pool.Volume(v.Dataset()); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("the node re-created a volume it held before: %v", err)
	}
	if _, err := third.link(v.Dataset()); err == nil {
		t.Fatal("a vanished volume has a device link")
	}
}

// vanish destroys a dataset in the pool in dir while no agent runs, as an
// operator's mistake would, and starts a daemon over what is left.
func vanish(t *testing.T, w *world, s *testSite, dir, dataset string) *testNode {
	t.Helper()
	pool, err := btrfs.New(btrfs.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.DestroyVolume(dataset); err != nil {
		t.Fatalf("destroying %s behind the agent's back: %v", dataset, err)
	}
	if err := pool.Close(); err != nil {
		t.Fatal(err)
	}
	return w.startNode(s, "n1", dir)
}
