package csi_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// TestTheKernelWakesAWaiterWhenALoopDeviceGrows: the watch NodeExpandVolume
// waits on (LinkDevices.WatchSizes, the kernel's uevents) wakes when a loop
// device takes its grown file's size, as the node agent's pass does it
// (losetup --set-capacity), and DeviceBytes then reads the new size.
func TestTheKernelWakesAWaiterWhenALoopDeviceGrows(t *testing.T) {
	loops := newLoopDevices(t)
	var v core.Volume
	v.Ref, v.SizeBytes = chain.Ref{Cluster: clusterA, Volume: "aaaaaaaa-0000-4000-8000-0000000000ee"}, 1<<20
	loop, err := loops.Device(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	devices := csi.LinkDevices{}
	changed, stop, err := devices.WatchSizes()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if size, err := devices.DeviceBytes(loop); err != nil || size != 1<<20 {
		t.Fatalf("%s holds %d bytes (%v), want 1 MiB", loop, size, err)
	}
	v.SizeBytes = 2 << 20
	if _, err := loops.Device(ctx, v); err != nil { // grows the file, then losetup -c
		t.Fatal(err)
	}
	// Not a timing assertion: the guard only keeps a lost wake-up from
	// hanging the run.
	guard, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		select {
		case <-changed:
		case <-guard.Done():
			t.Fatalf("no wake-up after %s grew to 2 MiB", loop)
		}
		size, err := devices.DeviceBytes(loop)
		if err != nil {
			t.Fatal(err)
		}
		if size == 2<<20 {
			return
		}
	}
}
