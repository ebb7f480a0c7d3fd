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

// GrowingDevices are Devices whose devices' sizes a call can read, and whose
// size changes it can be woken by: NodeExpandVolume waits for the device the
// node agent is growing rather than grow the filesystem over the old size.
//
// Why wait at all: ControllerExpandVolume records the volume's new size and
// the node agent grows the device on its next pass; the CO expands on the
// node right after. A resize2fs before that pass grows nothing, yet the call
// answered OK with the new size (one csi-sanity run in seven on the local
// bed failed on it, issue 36).
type GrowingDevices interface {
	Devices
	// DeviceBytes is the size of the block device at path.
	DeviceBytes(path string) (uint64, error)
	// WatchSizes wakes changed (without blocking: a wake-up may stand for
	// several changes, or none) whenever a block device's size may have
	// changed, until stop, which waits for the watch to end.
	WatchSizes() (changed <-chan struct{}, stop func(), err error)
}

// grownDevice is v's device, waited for as device does, once it holds v's
// size. When its size cannot be watched (DeviceWait zero, Devices not
// GrowingDevices: the simulation, and DRBD devices, which the node agent
// does not grow) it answers the device as it is.
func (n *Node) grownDevice(ctx context.Context, v core.Volume) (string, error) {
	device, err := n.device(ctx, v)
	growing, ok := n.Devices.(GrowingDevices)
	if err != nil || n.DeviceWait <= 0 || !ok {
		return device, err
	}
	return waitForGrowth(ctx, growing, v, device, n.DeviceWait)
}

// waitForGrowth reads device's size each time a block device's size may have
// changed, until it holds v's size, bound passes or ctx ends; then it answers
// ErrDeviceNotReady (Unavailable), saying which device, its size and the one
// it waited for. The first reading is taken after the watch began, so a
// growth just before is not missed.
func waitForGrowth(ctx context.Context, devices GrowingDevices, v core.Volume, device string, bound time.Duration) (string, error) {
	changed, stop, err := devices.WatchSizes()
	if err != nil {
		return "", fmt.Errorf("%w: %s of %s: failed to watch its size grow to %d bytes: %w", ErrDeviceNotReady, device, v.Ref, v.SizeBytes, err)
	}
	defer stop()
	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		size, err := devices.DeviceBytes(device)
		if err != nil {
			return "", fmt.Errorf("failed to read the size of %s of %s: %w", device, v.Ref, err)
		}
		if size >= v.SizeBytes {
			return device, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("%w: %s of %s holds %d bytes, not yet the %d the volume was expanded to (waited %s for it, watching block devices' size changes)",
				ErrDeviceNotReady, device, v.Ref, size, v.SizeBytes, time.Since(started).Round(time.Millisecond))
		}
	}
}
