package btrfs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// Snapshot takes a read-only snapshot of the volume's head. What was written
// through the volume's loop device is flushed into the head file first, so
// the snapshot holds at least every synced write; btrfs flushes the file's
// own dirty pages into the snapshot as it takes it.
func (p *Pool) Snapshot(volume, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	action := fmt.Sprintf("cannot create snapshot '%s@%s'", volume, name)
	if _, err := p.lookup(volume, action); err != nil {
		return err
	}
	if why, ok := checkName(name); !ok {
		return refuse(backend.ErrInvalid, "%s: %s", action, why)
	}
	if _, err := os.Lstat(p.layout.snapshot(volume, name)); err == nil {
		return refuse(backend.ErrExists, "%s: dataset already exists", action)
	}
	if a, ok := p.attached[volume]; ok {
		if err := a.control.Sync(); err != nil {
			return classify(err)
		}
	}
	return p.btrfs.snapshot(context.Background(), p.layout.head(volume), p.layout.snapshot(volume, name), true)
}

// DestroySnapshot deletes a snapshot's subvolume. A snapshot that a clone was
// made from is ErrBusy: btrfs would delete it, but the pool keeps the
// contract that an origin outlives its clones.
func (p *Pool) DestroySnapshot(volume, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	ctx := context.Background()
	action := fmt.Sprintf("cannot destroy '%s@%s'", volume, name)
	if _, err := p.lookup(volume, action); err != nil {
		return err
	}
	list, err := p.snapshotsOf(ctx, volume)
	if err != nil {
		return err
	}
	if _, ok := findSnapshot(list, name); !ok {
		return refuse(backend.ErrNotFound, "could not find any snapshots to destroy; check snapshot names.")
	}
	if err := p.checkNoClones(volume, name); err != nil {
		return refuse(backend.ErrBusy, "%s: snapshot has dependent clones (%v)", action, err)
	}
	if err := p.checkNotSending(volume, name); err != nil {
		return refuse(backend.ErrBusy, "%s: %v", action, err)
	}
	return p.btrfs.deleteSubvolumes(ctx, p.layout.snapshot(volume, name))
}

// checkNoClones fails when a volume was cloned from the snapshot (from any
// snapshot of the volume when snapshot is empty), naming the clones.
func (p *Pool) checkNoClones(volume, snapshot string) error {
	metas, err := p.allMeta()
	if err != nil {
		return err
	}
	var clones []string
	for _, name := range slices.Sorted(maps.Keys(metas)) {
		originVolume, originSnapshot, ok := splitOrigin(metas[name].Origin)
		if ok && originVolume == volume && (snapshot == "" || originSnapshot == snapshot) {
			clones = append(clones, name+" of "+metas[name].Origin)
		}
	}
	if len(clones) > 0 {
		return errors.New(strings.Join(clones, ", "))
	}
	return nil
}

// checkNotSending fails while the pool sends from the snapshot (from any
// snapshot of the volume when snapshot is empty). btrfs refuses to delete a
// subvolume a send reads with EPERM; the pool refuses first, whole.
func (p *Pool) checkNotSending(volume, snapshot string) error {
	prefix := p.layout.snapshots(volume) + string(os.PathSeparator)
	for _, path := range slices.Sorted(maps.Keys(p.sending)) {
		if path == p.layout.snapshot(volume, snapshot) || (snapshot == "" && strings.HasPrefix(path, prefix)) {
			return fmt.Errorf("%s is being sent", path)
		}
	}
	return nil
}

// Clone makes a writable snapshot of a snapshot into a new, thin volume
// that records its origin.
func (p *Pool) Clone(volume, snapshot, target string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	action := fmt.Sprintf("cannot create '%s'", target)
	if _, err := p.lookup(volume, fmt.Sprintf("cannot open '%s@%s'", volume, snapshot)); err != nil {
		return err
	}
	list, err := p.snapshotsOf(context.Background(), volume)
	if err != nil {
		return err
	}
	if _, ok := findSnapshot(list, snapshot); !ok {
		return refuse(backend.ErrNotFound, "cannot open '%s@%s': dataset does not exist", volume, snapshot)
	}
	if why, ok := checkName(target); !ok {
		return refuse(backend.ErrInvalid, "%s: %s", action, why)
	}
	if _, err := os.Stat(p.layout.volume(target)); err == nil {
		return refuse(backend.ErrExists, "%s: dataset already exists", action)
	}
	return p.build(target, func(ctx context.Context, stage string) error {
		if err := p.btrfs.snapshot(ctx, p.layout.snapshot(volume, snapshot), filepath.Join(stage, headName), false); err != nil {
			return err
		}
		meta := volumeMeta{Provisioning: backend.Thin.String(), Origin: volume + "@" + snapshot}
		return writeMeta(filepath.Join(stage, metaName), meta)
	})
}

// Rollback replaces the volume's head with a writable snapshot of its latest
// snapshot. Rolling back past a later snapshot, or a volume that is open, is
// ErrBusy.
func (p *Pool) Rollback(volume, snapshot string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	ctx := context.Background()
	action := fmt.Sprintf("cannot rollback to '%s@%s'", volume, snapshot)
	if _, err := p.lookup(volume, action); err != nil {
		return err
	}
	list, err := p.snapshotsOf(ctx, volume)
	if err != nil {
		return err
	}
	if _, ok := findSnapshot(list, snapshot); !ok {
		return refuse(backend.ErrNotFound, "%s: dataset does not exist", action)
	}
	if list[len(list)-1].name != snapshot {
		return refuse(backend.ErrBusy, "%s: more recent snapshots or bookmarks exist", action)
	}
	if err := p.release(ctx, volume, action); err != nil {
		return err
	}
	return p.replaceHead(ctx, volume, snapshot)
}

// replaceHead makes a writable snapshot of a snapshot the volume's head:
// the new head is made beside the old one, the two swap by renames, and the
// old one is deleted. A failure part way leaves the volume to recoverHead,
// which completes or undoes the swap, so the head is always one of the two.
func (p *Pool) replaceHead(ctx context.Context, volume, snapshot string) error {
	dir := p.layout.volume(volume)
	newHead, oldHead, head := filepath.Join(dir, headNew), filepath.Join(dir, headOld), p.layout.head(volume)
	err := p.btrfs.snapshot(ctx, p.layout.snapshot(volume, snapshot), newHead, false)
	if err == nil {
		err = os.Rename(head, oldHead)
	}
	if err == nil {
		err = os.Rename(newHead, head)
	}
	if err == nil {
		err = p.btrfs.deleteSubvolumes(ctx, oldHead)
	}
	if err != nil {
		return withCleanup(err, p.recoverHead(ctx, volume))
	}
	return nil
}

// modifiedSince reports whether the volume's head changed after its latest
// snapshot was taken, or after the head was made from a snapshot, whichever
// came later. A snapshot of the head leaves the head's generation at the
// snapshot's creation; a write raises it. The running transaction is
// committed first, so a write that reached the file counts.
func (p *Pool) modifiedSince(ctx context.Context, volume string, latest snapshot) (bool, error) {
	if err := p.btrfs.sync(ctx, p.layout.mount()); err != nil {
		return false, err
	}
	head, err := p.btrfs.show(ctx, p.layout.head(volume))
	if err != nil {
		return false, err
	}
	return head.generation > max(head.cgeneration, latest.cgeneration), nil
}
