package csi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/baton-dr/baton/storage/core"
)

// WatchedDevices are Devices whose devices appear as entries of a directory
// the node agent (or the kernel) writes: a call that finds a device not there
// yet can watch that directory for it rather than answer Unavailable at once.
//
// Why wait at all: the node agent makes a volume's device on its next pass
// after the volume is placed here, and the CO stages right after
// CreateVolume. csi-sanity does not retry a NodeStageVolume that failed, and
// the kubelet retries only on its backoff, so answering at once makes the
// first stage of nearly every new volume fail (issue 36).
type WatchedDevices interface {
	Devices
	// WatchDir is the directory in which v's device appears.
	WatchDir(v core.Volume) string
}

// device finds v's device. When it is not there yet and the node may wait
// (DeviceWait > 0, Devices watched), it waits for it: see waitForDevice.
func (n *Node) device(ctx context.Context, v core.Volume) (string, error) {
	path, err := n.Devices.Device(ctx, v)
	watched, ok := n.Devices.(WatchedDevices)
	if !errors.Is(err, ErrDeviceNotReady) || n.DeviceWait <= 0 || !ok {
		return path, err
	}
	return waitForDevice(ctx, watched, v, n.DeviceWait)
}

// waitForDevice looks for v's device each time its directory changes, until
// it is there, bound passes or ctx ends; then it answers ErrDeviceNotReady
// (Unavailable), saying what it waited for and how long. The first look is
// taken after the watch began, so a device made just before is not missed;
// a lost event (the watcher's queue overflowed) is a reason to look again.
func waitForDevice(ctx context.Context, devices WatchedDevices, v core.Volume, bound time.Duration) (string, error) {
	dir := devices.WatchDir(v)
	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return "", fmt.Errorf("%w: %s of %s: failed to watch %s for it: %w", ErrDeviceNotReady, v.Dataset(), v.Ref, dir, err)
	}
	defer watcher.Close()
	if err := watcher.Add(dir); err != nil {
		return "", fmt.Errorf("%w: %s of %s: failed to watch %s for it: %w", ErrDeviceNotReady, v.Dataset(), v.Ref, dir, err)
	}
	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		path, err := devices.Device(ctx, v)
		if !errors.Is(err, ErrDeviceNotReady) {
			return path, err
		}
		select {
		case <-watcher.Events:
		case <-watcher.Errors:
		case <-ctx.Done():
			return "", fmt.Errorf("%w (waited %s for it, watching %s)", err, time.Since(started).Round(time.Millisecond), dir)
		}
	}
}
