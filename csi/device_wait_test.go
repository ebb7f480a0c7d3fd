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
