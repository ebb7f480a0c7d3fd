package btrfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/baton-dr/baton/node/fence"
	"github.com/baton-dr/baton/node/loop"
	"github.com/baton-dr/baton/storage/backend"
)

const (
	// sectorBytes is the unit of a volume's size: sizes round up to it, as a
	// zvol's round up to its block size, and a loop device's size is a
	// multiple of it.
	sectorBytes = 4096
	// maxVolumeBytes keeps offsets within an int64 and below btrfs's limit.
	maxVolumeBytes = uint64(1) << 62
)

// CreateVolume creates a volume: a subvolume holding one file of the size,
// sparse (thin) or preallocated (thick). A thick volume's preallocation is a
// reservation only until its first snapshot: btrfs has no refreservation,
// and a write into an extent a snapshot shares is copied, taking new space.
func (p *Pool) CreateVolume(name string, sizeBytes uint64, provisioning backend.Provisioning) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	action := fmt.Sprintf("cannot create '%s'", name)
	if why, ok := checkName(name); !ok {
		return refuse(backend.ErrInvalid, "%s: %s", action, why)
	}
	if provisioning != backend.Thin && provisioning != backend.Thick {
		return refuse(backend.ErrInvalid, "%s: unknown provisioning %v", action, provisioning)
	}
	if _, err := os.Stat(p.layout.volume(name)); err == nil {
		return refuse(backend.ErrExists, "%s: dataset already exists", action)
	}
	if sizeBytes == 0 || sizeBytes > maxVolumeBytes {
		return refuse(backend.ErrInvalid, "%s: volume size %d is out of range", action, sizeBytes)
	}
	return p.build(name, func(ctx context.Context, stage string) error {
		if err := p.btrfs.createSubvolume(ctx, filepath.Join(stage, headName)); err != nil {
			return err
		}
		if err := createData(filepath.Join(stage, headName, dataName), roundUp(sizeBytes), provisioning); err != nil {
			return err
		}
		return writeMeta(filepath.Join(stage, metaName), volumeMeta{Provisioning: provisioning.String()})
	})
}

func roundUp(n uint64) uint64 { return (n + sectorBytes - 1) / sectorBytes * sectorBytes }

// createData creates a volume's file: sparse, or preallocated whole.
func createData(path string, sizeBytes uint64, provisioning backend.Provisioning) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if provisioning == backend.Thick {
		err = fallocate(f, 0, sizeBytes)
	} else {
		err = f.Truncate(int64(sizeBytes))
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// fallocate preallocates length bytes from offset and grows the file to
// cover them; a refusal changes nothing, as btrfs reserves the whole range
// before it allocates any of it.
func fallocate(f *os.File, offset, length uint64) error {
	if err := unix.Fallocate(int(f.Fd()), 0, int64(offset), int64(length)); err != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}

// build makes a new volume in a staging directory and renames it into
// place, so the volume appears whole or not at all. fill creates what the
// volume holds in the staging directory, whose snapshots directory exists.
func (p *Pool) build(name string, fill func(ctx context.Context, stage string) error) error {
	ctx := context.Background()
	stage, err := p.staging()
	if err != nil {
		return err
	}
	err = os.Mkdir(filepath.Join(stage, snapsName), 0o700)
	if err == nil {
		err = fill(ctx, stage)
	}
	if err == nil {
		err = renameNoReplace(stage, p.layout.volume(name))
	}
	if err != nil {
		return withCleanup(classify(err), p.discard(ctx, stage, true))
	}
	return nil
}

// renameNoReplace renames, refusing to replace what exists at the target.
func renameNoReplace(from, to string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE); err != nil {
		return &os.PathError{Op: "renameat2", Path: to, Err: err}
	}
	return nil
}

// withCleanup returns err, joined with the error of the cleanup after it, if any.
func withCleanup(err, cleanup error) error {
	if cleanup == nil {
		return err
	}
	return errors.Join(err, fmt.Errorf("and cleaning up: %w", cleanup))
}

// discard deletes a directory with the subvolumes in it. With wait, it
// waits until btrfs has freed their space.
func (p *Pool) discard(ctx context.Context, directory string, wait bool) error {
	list, err := p.btrfs.list(ctx, p.layout.mount(), false)
	if err != nil {
		return err
	}
	prefix := p.layout.relative(directory) + "/"
	var paths []string
	for _, s := range list {
		if strings.HasPrefix(s.path, prefix) {
			paths = append(paths, filepath.Join(p.layout.mount(), s.path))
		}
	}
	if err := p.btrfs.deleteSubvolumes(ctx, paths...); err != nil {
		return err
	}
	if wait && len(paths) > 0 {
		if err := p.btrfs.waitCleaned(ctx, p.layout.mount()); err != nil {
			return err
		}
	}
	return os.RemoveAll(directory)
}

// ResizeVolume grows a volume's file, preallocating the growth of a thick
// one. Shrinking is refused (it would cut data off), as is resizing a
// fenced volume.
func (p *Pool) ResizeVolume(name string, sizeBytes uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	action := fmt.Sprintf("cannot set property for '%s'", name)
	meta, err := p.lookup(name, action)
	if err != nil {
		return err
	}
	stat, err := os.Stat(p.layout.data(name))
	if err != nil {
		return err
	}
	current, wanted := uint64(stat.Size()), roundUp(sizeBytes)
	switch {
	case sizeBytes > maxVolumeBytes:
		return refuse(backend.ErrInvalid, "%s: 'volsize' %d is too large", action, sizeBytes)
	case wanted < current:
		return refuse(backend.ErrInvalid, "%s: 'volsize' cannot shrink from %d to %d bytes", action, current, sizeBytes)
	case wanted == current:
		return nil
	case meta.ReadOnly:
		return refuse(backend.ErrRefused, "%s: dataset is read-only", action)
	}
	if err := growData(p.layout.data(name), current, wanted, meta.provisioning()); err != nil {
		return classify(err)
	}
	if a, ok := p.attached[name]; ok {
		return p.losetup.Refresh(context.Background(), a.device)
	}
	return nil
}

// growData grows a volume's file; a refused preallocation leaves its size.
func growData(path string, current, wanted uint64, provisioning backend.Provisioning) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if provisioning == backend.Thick {
		if err = fallocate(f, current, wanted-current); err != nil {
			// Drop whatever a partial preallocation left past the old end.
			err = withCleanup(err, f.Truncate(int64(current)))
		}
	} else {
		err = f.Truncate(int64(wanted))
	}
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// DestroyVolume destroys a volume and its snapshots: its directory leaves
// the volumes at once (a rename), then its subvolumes are deleted and the
// call waits until their space is free. A volume whose snapshots have
// clones, that is open, or whose snapshots are being sent is ErrBusy.
func (p *Pool) DestroyVolume(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	ctx := context.Background()
	action := fmt.Sprintf("cannot destroy '%s'", name)
	if _, err := p.lookup(name, action); err != nil {
		return err
	}
	if err := p.checkNoClones(name, ""); err != nil {
		return refuse(backend.ErrBusy, "%s: volume has dependent clones (%v)", action, err)
	}
	if err := p.checkNotSending(name, ""); err != nil {
		return refuse(backend.ErrBusy, "%s: %v", action, err)
	}
	if err := p.release(ctx, name, action); err != nil {
		return err
	}
	if err := p.checkNotAttached(ctx, name, action); err != nil {
		return err
	}
	stage, err := p.staging()
	if err != nil {
		return err
	}
	gone := filepath.Join(stage, name)
	if err := os.Rename(p.layout.volume(name), gone); err != nil {
		return errors.Join(err, os.Remove(stage))
	}
	return p.discard(ctx, stage, true)
}

// checkNotAttached refuses a volume whose files a loop device the pool does
// not hold still shows (another process attached it, or detached it lazily
// while it was open): btrfs could not free the volume's space while the file
// is open, and the destroy would wait for it.
func (p *Pool) checkNotAttached(ctx context.Context, name, action string) error {
	devices, err := loop.List(ctx)
	if err != nil {
		return err
	}
	// By path, and by identity for a device attached from another mount
	// namespace, which shows the file under another name.
	var files []os.FileInfo
	err = filepath.WalkDir(p.layout.volume(name), func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		info, err := e.Info()
		files = append(files, info)
		return err
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	prefix := p.layout.volume(name) + string(os.PathSeparator)
	for _, d := range devices {
		if strings.HasPrefix(d.BackFile, prefix) || slices.ContainsFunc(files, d.Backs) {
			return refuse(backend.ErrBusy, "%s: %s shows %s", action, d.Name, d.BackFile)
		}
	}
	return nil
}

// SetReadOnly records the fence in the volume's metadata and sets it on the
// volume's loop device, if attached: open devices refuse writes at once, and
// a file system mounted from the device is shut down (package fence). The
// fence is recorded first: a fence that fails (a file system that cannot be
// shut down) is tried again by the next call, and holds from the next attach.
// Lifting it over a file system the fence shut down, still mounted, lifts it
// and reports fence.ErrStillShutDown.
func (p *Pool) SetReadOnly(name string, readOnly bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	meta, err := p.lookup(name, fmt.Sprintf("cannot set property for '%s'", name))
	if err != nil {
		return err
	}
	if meta.ReadOnly != readOnly {
		// Only a change is written: the node agent sets every volume's
		// fence on every pass, and each write is an fsync.
		meta.ReadOnly = readOnly
		if err := writeMeta(p.layout.meta(name), meta); err != nil {
			return err
		}
	}
	a, ok := p.attached[name]
	switch {
	case !ok:
		return nil
	case readOnly:
		return fence.Fence(a.control, p.mounts)
	default:
		return fence.Lift(a.control, p.mounts)
	}
}
