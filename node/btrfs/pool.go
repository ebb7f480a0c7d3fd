package btrfs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/fence"
	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/storage/backend"
)

// minPoolBytes is the smallest image New creates: mkfs.btrfs refuses a device
// below about 109 MiB with its default profiles.
const minPoolBytes = 128 << 20

// label is the filesystem label of a pool's image.
const label = "baton"

// Options configure a pool.
type Options struct {
	// Dir holds the pool: its image file and the directory it is mounted on.
	Dir string
	// SizeBytes is the size of the sparse image New creates when Dir holds
	// none. A pool that exists keeps its own size.
	SizeBytes uint64
	// Cmder runs the tools; nil runs them on this machine.
	Cmder exec.Cmder
	// DirectIO attaches volumes with `losetup --direct-io=on`, so that their
	// data is cached once (above the loop device), not twice. Off by default:
	// buffered loops are what btrfs's checksums are safe with when a page
	// changes while a direct write of it is in flight.
	DirectIO bool
	// Mounts is the mount namespace whose file systems on a volume a fence
	// shuts down (package fence): the node's, through /proc/1, unless set.
	Mounts fence.Namespace
}

// Pool is a btrfs filesystem on a loop device over a sparse file: one node's
// storage pool. Its methods are safe for concurrent use.
//
// One mutex serialises every operation on the pool's layout, including a
// Receive for as long as its stream flows: a volume's directory and
// subvolumes change in several steps that no other operation may see half
// done. A busier agent would lock per volume. Devices do their I/O outside
// the lock.
type Pool struct {
	mu       sync.Mutex
	layout   layout
	cmder    exec.Cmder
	btrfs    btrfsCommand
	losetup  loop.Losetup
	directIO bool
	mounts   fence.Namespace
	device   string                 // the loop device holding the filesystem
	attached map[string]*attachment // loop devices of volumes, by volume
	sending  map[string]int         // sends in flight, by snapshot path
	closed   bool
}

var _ backend.Pool = (*Pool)(nil)

// New opens the pool in options.Dir, creating it when the directory holds
// none. An existing pool is adopted as it is: a mounted one stays mounted, an
// image that holds a btrfs filesystem is mounted, and nothing is ever
// formatted that blkid finds a signature on. Operations a crash interrupted
// are finished or undone (see recover).
func New(options Options) (*Pool, error) {
	if options.Dir == "" || !filepath.IsAbs(options.Dir) {
		return nil, refuse(backend.ErrInvalid, "pool directory %q is not an absolute path", options.Dir)
	}
	if err := os.MkdirAll(filepath.Join(options.Dir, mountName), 0o700); err != nil {
		return nil, err
	}
	dir, err := filepath.EvalSymlinks(options.Dir)
	if err != nil {
		return nil, err
	}
	cmder := options.Cmder
	if cmder == nil {
		cmder = exec.Local{}
	}
	p := &Pool{
		layout:   layout{dir: dir},
		cmder:    cmder,
		btrfs:    btrfsCommand{cmder: cmder},
		losetup:  loop.Losetup{Cmder: cmder},
		directIO: options.DirectIO,
		mounts:   options.Mounts,
		attached: map[string]*attachment{},
		sending:  map[string]int{},
	}
	ctx := context.Background()
	if p.device, err = p.mountPool(ctx, options.SizeBytes); err != nil {
		return nil, err
	}
	if err := p.open(ctx); err != nil {
		return nil, errors.Join(err, p.shutdown(ctx))
	}
	return p, nil
}

// open prepares a mounted pool for use: its directories, the recovery of
// interrupted operations, and the loop devices a previous run left attached.
func (p *Pool) open(ctx context.Context) error {
	for _, d := range []string{p.layout.volumes(), p.layout.staging()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	if err := p.recover(ctx); err != nil {
		return fmt.Errorf("recovering the pool in %s: %w", p.layout.dir, err)
	}
	return p.adoptAttachments(ctx)
}

// Close detaches the volumes' loop devices, unmounts the filesystem and
// detaches its loop device. Open devices and sends in flight make it
// ErrBusy. Closing a closed pool does nothing.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	for _, volume := range slices.Sorted(maps.Keys(p.attached)) {
		if a := p.attached[volume]; a.opens > 0 {
			return refuse(backend.ErrBusy, "cannot close the pool: volume '%s' is open as %s", volume, a.device)
		}
	}
	if len(p.sending) > 0 {
		return refuse(backend.ErrBusy, "cannot close the pool: %d sends in flight", len(p.sending))
	}
	return p.shutdown(context.Background())
}

// shutdown detaches and unmounts everything; the pool is unusable after.
func (p *Pool) shutdown(ctx context.Context) error {
	var errs []error
	for _, volume := range slices.Sorted(maps.Keys(p.attached)) {
		errs = append(errs, p.detach(ctx, volume))
	}
	errs = append(errs, unmount(ctx, p.cmder, p.layout.mount()))
	errs = append(errs, p.losetup.Detach(ctx, p.device))
	p.closed = true
	return errors.Join(errs...)
}

// usable refuses operations on a closed pool.
func (p *Pool) usable() error {
	if p.closed {
		return refuse(backend.ErrInvalid, "the pool in %s is closed", p.layout.dir)
	}
	return nil
}
