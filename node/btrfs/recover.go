package btrfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// recover finishes or undoes what a crash interrupted, so an adopted pool
// shows whole volumes only:
//   - .staging holds volumes half built or half destroyed: deleted;
//   - a volume with .head-new or .head-old was replacing its head: the swap
//     is completed if it had begun, undone otherwise (recoverHead);
//   - a writable subvolume among a volume's snapshots is a receive that did
//     not finish: deleted.
func (p *Pool) recover(ctx context.Context) error {
	staged, err := os.ReadDir(p.layout.staging())
	if err != nil {
		return err
	}
	for _, e := range staged {
		if err := p.discard(ctx, filepath.Join(p.layout.staging(), e.Name()), false); err != nil {
			return err
		}
	}
	volumes, err := os.ReadDir(p.layout.volumes())
	if err != nil {
		return err
	}
	for _, v := range volumes {
		if err := p.recoverHead(ctx, v.Name()); err != nil {
			return err
		}
	}
	return p.deleteUnfinishedReceives(ctx)
}

// recoverHead brings a volume whose head was being replaced back to one
// head: with no head, .head-new (complete once it exists: one snapshot made
// it) or else .head-old takes its place; whatever is left is deleted.
func (p *Pool) recoverHead(ctx context.Context, volume string) error {
	dir := p.layout.volume(volume)
	exists := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	if !exists(headName) {
		for _, candidate := range []string{headNew, headOld} {
			if exists(candidate) {
				if err := os.Rename(filepath.Join(dir, candidate), p.layout.head(volume)); err != nil {
					return err
				}
				break
			}
		}
	}
	var leftovers []string
	for _, name := range []string{headNew, headOld} {
		if exists(name) {
			leftovers = append(leftovers, filepath.Join(dir, name))
		}
	}
	return p.btrfs.deleteSubvolumes(ctx, leftovers...)
}

// deleteUnfinishedReceives deletes the writable subvolumes among snapshots.
func (p *Pool) deleteUnfinishedReceives(ctx context.Context) error {
	all, err := p.btrfs.list(ctx, p.layout.mount(), false)
	if err != nil {
		return err
	}
	readOnly, err := p.btrfs.list(ctx, p.layout.mount(), true)
	if err != nil {
		return err
	}
	finished := map[uint64]bool{}
	for _, s := range readOnly {
		finished[s.id] = true
	}
	var errs []error
	for _, s := range all {
		parts := strings.Split(s.path, "/")
		if len(parts) == 4 && parts[0] == volumesName && parts[2] == snapsName && !finished[s.id] {
			errs = append(errs, p.btrfs.deleteSubvolumes(ctx, filepath.Join(p.layout.mount(), s.path)))
		}
	}
	return errors.Join(errs...)
}
