package btrfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/baton-dr/baton/storage/backend"
)

// device is a volume opened for block I/O: a buffered descriptor of its loop
// device. Writes land in the block device's page cache; Sync (fsync) pushes
// them through the loop device into the head file and has btrfs make them
// durable. The kernel enforces the fence on a device: a block device marked
// read-only refuses writes through its node with EPERM, on descriptors
// opened before the fence too (a mounted file system's writes the fence
// stops by shutting it down, package fence).
type device struct {
	pool   *Pool
	volume string
	file   *os.File

	mu     sync.Mutex // guards closed against a concurrent Close
	closed bool
}

var _ backend.Device = (*device)(nil)

// Open attaches the volume's loop device (at its first Open) and opens it.
// A fenced volume opens too; its writes are refused.
func (p *Pool) Open(volume string) (backend.Device, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return nil, err
	}
	meta, err := p.lookup(volume, fmt.Sprintf("cannot open '%s'", volume))
	if err != nil {
		return nil, err
	}
	a, err := p.attach(context.Background(), volume, meta)
	if err != nil {
		return nil, err
	}
	file, err := os.OpenFile(a.device, os.O_RDWR, 0)
	if err != nil {
		if a.opens == 0 {
			err = errors.Join(err, p.detach(context.Background(), volume))
		}
		return nil, err
	}
	a.opens++
	return &device{pool: p, volume: volume, file: file}, nil
}

func (d *device) ReadAt(buf []byte, offset int64) (int, error) {
	n, err := d.file.ReadAt(buf, offset)
	return n, classify(err)
}

func (d *device) WriteAt(data []byte, offset int64) (int, error) {
	n, err := d.file.WriteAt(data, offset)
	return n, classify(err)
}

// Sync flushes the device. A loop device whose backing file could not take
// a write (the pool is full) fails its writeback with EIO, as the kernel
// reports every failed buffer-head writeback whatever the bio said, so an
// EIO is asked about: on a pool with no free space it is ErrPoolFull.
func (d *device) Sync() error {
	err := d.file.Sync()
	if !errors.Is(err, syscall.EIO) {
		return classify(err)
	}
	usage, usageErr := d.pool.Usage()
	if usageErr == nil && usage.FreeBytes == 0 {
		return &backend.ToolError{Kind: backend.ErrPoolFull, Tool: kernelTool,
			Message: err.Error() + " (the pool has no free space left)"}
	}
	return err
}

// Close closes the descriptor; the volume's last Close detaches its loop
// device, and the kernel flushes the device's cache on that last close.
func (d *device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return refuse(backend.ErrInvalid, "%s: file already closed", d.file.Name())
	}
	d.closed = true
	err := d.file.Close()
	p := d.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.attached[d.volume]
	if a == nil || a.opens == 0 {
		panic("btrfs: closing a device of a volume with no open attachment: " + d.volume)
	}
	a.opens--
	if a.opens == 0 {
		err = errors.Join(err, p.detach(context.Background(), d.volume))
	}
	return err
}

// DevicePath is the loop device a volume's open Devices use: the block
// device a consumer outside the pool stages (the CSI node plugin, through the
// link the node agent keeps per volume). It stays valid while the caller
// holds a Device of the volume open: the last Close detaches it. A volume
// with no Device open is ErrNotFound.
func (p *Pool) DevicePath(volume string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return "", err
	}
	a, ok := p.attached[volume]
	if !ok || a.opens == 0 {
		return "", refuse(backend.ErrNotFound, "volume '%s' is not open", volume)
	}
	return a.device, nil
}
