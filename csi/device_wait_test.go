package csi_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	csiapi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// TestNodeStageWaitsForTheDeviceTheAgentIsMaking: a stage right after
// CreateVolume finds no device yet -- the node agent makes its link on its
// next pass -- and waits for it, watching the link directory: the link made
// after the call looked answers the call. A device that never comes is
// Unavailable past the node's bound, or once the call ends, naming the link
// it waited for.
func TestNodeStageWaitsForTheDeviceTheAgentIsMaking(t *testing.T) {
	w := newWorld(t)
	w.deviceWait = time.Minute
	links := t.TempDir()
	devices := &agentLinks{LinkDevices: csi.LinkDevices{Dir: links}, missed: make(chan struct{})}
	mounter := newFakeMounter()
	d := w.newDriverWith(clusterA, "a1", w.secret(clusterA), devices, mounter)
	handle := d.create(t, "pvc-new")
	device := filepath.Join(t.TempDir(), "loop7") // what the agent's link names
	w.must(os.WriteFile(device, nil, 0o600))
	link := filepath.Join(links, w.volume(rootOf(t, handle)).Dataset())
	made := make(chan error, 1)
	go func() {
		select {
		case <-devices.missed: // the call looked and found nothing: the agent makes the link now
			made <- os.Symlink(device, link)
		case <-t.Context().Done():
			made <- t.Context().Err()
		}
	}()
	staging := "/staging/new"
	if _, err := d.node.NodeStageVolume(ctx, stageRequest(handle, staging, d.secrets)); err != nil {
		t.Fatalf("staging while the node agent makes the device: %v, want it staged once the link appears", err)
	}
	w.must(<-made)
	want, err := filepath.EvalSymlinks(device)
	w.must(err)
	if got := mounter.device(staging); got != want {
		t.Errorf("staged %q, want the device the link names, %q", got, want)
	}

	// A device that never comes: Unavailable once the node's bound passes.
	w.deviceWait = 50 * time.Millisecond
	empty := t.TempDir()
	impatient := w.newDriverWith(clusterA, "a1", w.secret(clusterA), csi.LinkDevices{Dir: empty}, newFakeMounter())
	handle = impatient.create(t, "pvc-never")
	never := filepath.Join(empty, w.volume(rootOf(t, handle)).Dataset())
	_, err = impatient.node.NodeStageVolume(ctx, stageRequest(handle, staging, impatient.secrets))
	wantWaitedFor(t, "past the node's bound", err, never)

	// ... or once the call ends, here cancelled once it looked, well before
	// the node's bound.
	w.deviceWait = time.Hour
	watched := &agentLinks{LinkDevices: csi.LinkDevices{Dir: empty}, missed: make(chan struct{})}
	patient := w.newDriverWith(clusterA, "a1", w.secret(clusterA), watched, newFakeMounter())
	call, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-watched.missed:
		case <-t.Context().Done():
		}
		cancel()
	}()
	_, err = patient.services.Node.NodeStageVolume(call, stageRequest(handle, staging, patient.secrets))
	wantWaitedFor(t, "once the call ended", err, never)
}

// agentLinks are the node's links, telling the test when a call first found
// a device missing.
type agentLinks struct {
	csi.LinkDevices
	missed chan struct{} // closed at the first miss
	once   sync.Once
}

func (d *agentLinks) Device(ctx context.Context, v core.Volume) (string, error) {
	path, err := d.LinkDevices.Device(ctx, v)
	if errors.Is(err, csi.ErrDeviceNotReady) {
		d.once.Do(func() { close(d.missed) })
	}
	return path, err
}

func stageRequest(handle, staging string, secrets map[string]string) *csiapi.NodeStageVolumeRequest {
	return &csiapi.NodeStageVolumeRequest{VolumeId: handle, StagingTargetPath: staging, Secrets: secrets,
		VolumeCapability: mountCapability("")}
}

func rootOf(t testing.TB, handle string) chain.Ref {
	t.Helper()
	root, err := chain.ParseRef(handle)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func wantWaitedFor(t testing.TB, what string, err error, link string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), link) || !strings.Contains(st.Message(), "waited") {
		t.Errorf("a device that never comes, %s: %s %q, want Unavailable saying it waited for %s", what, st.Code(), st.Message(), link)
	}
}

// TestNodeExpandWaitsForTheDeviceTheAgentIsGrowing: an expansion on the node
// right after ControllerExpandVolume finds the device at its old size -- the
// node agent grows it on its next pass -- and waits for it, woken by the
// device's size change, before it grows the filesystem: the growth made
// after the call read the old size answers the call. A device that never
// grows is Unavailable past the node's bound, naming the device and the size
// it waited for, and no filesystem is grown over the old size.
func TestNodeExpandWaitsForTheDeviceTheAgentIsGrowing(t *testing.T) {
	w := newWorld(t)
	w.deviceWait = time.Minute
	devices := newGrowingDevices()
	mounter := &sizingMounter{fakeMounter: newFakeMounter(), devices: devices, resized: map[string]uint64{}}
	d := w.newDriverWith(clusterA, "a1", w.secret(clusterA), devices, mounter)
	handle := d.create(t, "pvc-growing")
	device, err := devices.Device(ctx, w.volume(rootOf(t, handle)))
	w.must(err)
	devices.grow(device, 1<<30)
	staging := "/staging/growing"
	if _, err := d.node.NodeStageVolume(ctx, stageRequest(handle, staging, d.secrets)); err != nil {
		t.Fatal(err)
	}
	const grown = 2 << 30
	if _, err := d.controller.ControllerExpandVolume(ctx, &csiapi.ControllerExpandVolumeRequest{VolumeId: handle,
		CapacityRange: &csiapi.CapacityRange{RequiredBytes: grown}, Secrets: d.secrets}); err != nil {
		t.Fatal(err)
	}
	go func() {
		select {
		case <-devices.read: // the call read the old size: the agent grows the device now
			devices.grow(device, grown)
		case <-t.Context().Done():
		}
	}()
	expanded, err := d.node.NodeExpandVolume(ctx, expandRequest(handle, staging, d.secrets))
	if err != nil || expanded.GetCapacityBytes() != grown {
		t.Fatalf("expanding while the node agent grows the device: %v, %v; want %d bytes once it grew", expanded, err, grown)
	}
	if got := mounter.resizedAt(device); got != grown {
		t.Errorf("grew the filesystem over a device of %d bytes, want it grown over the device's %d", got, grown)
	}

	// A device that never grows: Unavailable once the node's bound passes,
	// and no filesystem grown.
	w.deviceWait = 50 * time.Millisecond
	stuck := newGrowingDevices()
	stuck.grow(device, 1<<30)
	// The same node's mounts: the volume stays staged.
	unsized := &sizingMounter{fakeMounter: mounter.fakeMounter, devices: stuck, resized: map[string]uint64{}}
	impatient := w.newDriverWith(clusterA, "a1", w.secret(clusterA), stuck, unsized)
	_, err = impatient.node.NodeExpandVolume(ctx, expandRequest(handle, staging, impatient.secrets))
	st := status.Convert(err)
	if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), device) || !strings.Contains(st.Message(), "2147483648") ||
		!strings.Contains(st.Message(), "waited") {
		t.Errorf("a device that never grows: %s %q, want Unavailable saying it waited for %s to hold 2147483648 bytes", st.Code(), st.Message(), device)
	}
	if got := unsized.resizedAt(device); got != 0 {
		t.Errorf("grew the filesystem over a device of %d bytes that never grew", got)
	}
}

// growingDevices are devices whose sizes the test sets, waking a watcher on
// each growth, and telling the test when a call first read a size.
type growingDevices struct {
	fakeDevices
	mu      sync.Mutex
	sizes   map[string]uint64 // device -> bytes
	changed chan struct{}
	read    chan struct{} // closed at the first reading
	once    sync.Once
}

var _ csi.GrowingDevices = (*growingDevices)(nil)

func newGrowingDevices() *growingDevices {
	return &growingDevices{sizes: map[string]uint64{}, changed: make(chan struct{}, 1), read: make(chan struct{})}
}

func (d *growingDevices) grow(device string, bytes uint64) {
	d.mu.Lock()
	d.sizes[device] = bytes
	d.mu.Unlock()
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

func (d *growingDevices) DeviceBytes(device string) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.once.Do(func() { close(d.read) })
	return d.sizes[device], nil
}

func (d *growingDevices) WatchSizes() (<-chan struct{}, func(), error) {
	return d.changed, func() {}, nil
}

// sizingMounter records the size of the device each filesystem was grown
// over.
type sizingMounter struct {
	*fakeMounter
	devices *growingDevices
	mu      sync.Mutex
	resized map[string]uint64 // device -> its bytes when the filesystem grew
}

func (m *sizingMounter) Resize(_ context.Context, device, _, _ string) error {
	m.devices.mu.Lock()
	size := m.devices.sizes[device]
	m.devices.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.resized[device] = size
	return nil
}

func (m *sizingMounter) resizedAt(device string) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.resized[device]
}

func expandRequest(handle, path string, secrets map[string]string) *csiapi.NodeExpandVolumeRequest {
	return &csiapi.NodeExpandVolumeRequest{VolumeId: handle, VolumePath: path, Secrets: secrets, VolumeCapability: mountCapability("")}
}
