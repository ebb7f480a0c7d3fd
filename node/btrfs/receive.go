package btrfs

import (
	"bufio"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// receivePlan is what the checks of a stream against the pool decided.
type receivePlan struct {
	newVolume bool
	origin    string   // "volume@snapshot" a clone stream's volume is cloned from
	base      snapshot // what the stream builds on: a delta's base, a clone's origin
	skip      bool     // the volume holds the stream's snapshot already
}

// Receive applies a stream of Send. The stream's header is checked against
// the pool before btrfs reads any of it: a full or clone stream makes a new
// volume and refuses an existing one (ErrExists); a delta needs the volume's
// latest snapshot to be its base (ErrNoBase when the volume lacks the base,
// ErrDiverged when the base is not the latest or the head changed since).
// btrfs receive then writes the snapshot; a new volume is built in staging
// and renamed into place, a delta's snapshot is received among the volume's
// snapshots and its head replaced. A failure deletes what btrfs left, so a
// refused or broken stream changes nothing. A delta whose snapshot the
// volume holds (same name and GUID) is read and ignored, as zfs does. A
// stream whose base is a snapshot this pool took itself, not one it
// received, is received beside an alias of the base (alias.go).
func (p *Pool) Receive(volume string, stream io.Reader) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	ctx := context.Background()
	if why, ok := checkName(volume); !ok {
		return refuse(backend.ErrInvalid, "cannot receive: %s", why)
	}
	r := bufio.NewReaderSize(stream, 64<<10)
	h, err := readStreamHeader(r)
	if err != nil {
		return refuse(backend.ErrInvalid, "cannot receive: %v", err)
	}
	if why, ok := checkName(h.name); !ok {
		return refuse(backend.ErrInvalid, "cannot receive: snapshot name %q: %s", h.name, why)
	}
	plan, err := p.planReceive(ctx, volume, h)
	switch {
	case err != nil:
		return err
	case plan.skip:
		_, err := io.Copy(io.Discard, r)
		return err
	case plan.newVolume:
		return p.withBaseAlias(ctx, plan.base, func() error { return p.receiveVolume(volume, h, plan.origin, r) })
	}
	err = p.withBaseAlias(ctx, plan.base, func() error { return p.receiveInto(ctx, p.layout.snapshots(volume), h, r) })
	if err != nil {
		return err
	}
	return p.replaceHead(ctx, volume, h.name)
}

// planReceive checks a stream's header against the pool, in zfs's order.
func (p *Pool) planReceive(ctx context.Context, volume string, h streamHeader) (receivePlan, error) {
	all, err := p.allSnapshots(ctx)
	if err != nil {
		return receivePlan{}, err
	}
	plan := receivePlan{newVolume: !h.incremental() || h.clone}
	if h.clone {
		origin, ok := findGUID(all, h.baseUUID)
		if !ok {
			return plan, refuse(backend.ErrNoBase, "cannot receive: local origin for clone %s@%s does not exist", volume, h.name)
		}
		plan.origin, plan.base = origin.volume+"@"+origin.name, origin
	}
	action := "cannot receive incremental stream"
	if plan.newVolume {
		action = "cannot receive new filesystem stream"
	}
	_, statErr := os.Stat(p.layout.meta(volume))
	exists := statErr == nil
	switch {
	case exists && plan.newVolume:
		return plan, refuse(backend.ErrExists, "%s: destination '%s' exists", action, volume)
	case !exists && !plan.newVolume:
		return plan, refuse(backend.ErrNoBase, "%s: destination '%s' does not exist", action, volume)
	case !exists:
		return plan, nil
	}
	return p.planDelta(ctx, volume, h, all[volume], action)
}

// planDelta checks a delta against the volume it extends.
func (p *Pool) planDelta(ctx context.Context, volume string, h streamHeader, list []snapshot, action string) (receivePlan, error) {
	if held, ok := findSnapshot(list, h.name); ok {
		if held.guid() == h.uuid {
			return receivePlan{skip: true}, nil
		}
		return receivePlan{}, refuse(backend.ErrExists, "cannot restore to %s@%s: destination already exists", volume, h.name)
	}
	i := slices.IndexFunc(list, func(s snapshot) bool { return s.guid() == h.baseUUID })
	if i < 0 {
		return receivePlan{}, refuse(backend.ErrNoBase, "%s: most recent snapshot of '%s' does not match incremental source", action, volume)
	}
	if latest := list[len(list)-1]; i != len(list)-1 {
		return receivePlan{}, refuse(backend.ErrDiverged, "%s: destination '%s' has snapshot '%s' after the stream's base '%s'",
			action, volume, latest.name, list[i].name)
	}
	modified, err := p.modifiedSince(ctx, volume, list[i])
	if err != nil {
		return receivePlan{}, err
	}
	if modified {
		return receivePlan{}, refuse(backend.ErrDiverged, "%s: destination '%s' has been modified since most recent snapshot", action, volume)
	}
	return receivePlan{base: list[i]}, p.release(ctx, volume, action)
}

// findGUID finds a snapshot by GUID in the whole pool, in volume order.
func findGUID(all map[string][]snapshot, guid string) (snapshot, bool) {
	for _, volume := range slices.Sorted(maps.Keys(all)) {
		for _, s := range all[volume] {
			if s.guid() == guid {
				return s, true
			}
		}
	}
	return snapshot{}, false
}

// receiveVolume builds a new volume from a full or clone stream.
func (p *Pool) receiveVolume(volume string, h streamHeader, origin string, r io.Reader) error {
	return p.build(volume, func(ctx context.Context, stage string) error {
		snapshots := filepath.Join(stage, snapsName)
		if err := p.receiveInto(ctx, snapshots, h, r); err != nil {
			return err
		}
		if err := p.btrfs.snapshot(ctx, filepath.Join(snapshots, h.name), filepath.Join(stage, headName), false); err != nil {
			return err
		}
		return writeMeta(filepath.Join(stage, metaName), volumeMeta{Provisioning: backend.Thin.String(), Origin: origin})
	})
}

// receiveInto runs btrfs receive into a directory and checks that it made
// exactly the stream's snapshot, read-only and carrying the stream's GUID.
// Whatever it made otherwise is deleted.
func (p *Pool) receiveInto(ctx context.Context, directory string, h streamHeader, r io.Reader) error {
	before, err := os.ReadDir(directory)
	if err != nil {
		return err
	}
	err = p.btrfs.receive(ctx, directory, r)
	if err == nil {
		err = p.checkReceived(ctx, directory, h, len(before))
	}
	if err != nil {
		return withCleanup(err, p.deleteNew(ctx, directory, before))
	}
	return nil
}

func (p *Pool) checkReceived(ctx context.Context, directory string, h streamHeader, entriesBefore int) error {
	after, err := os.ReadDir(directory)
	if err != nil {
		return err
	}
	if len(after) != entriesBefore+1 {
		return refuse(backend.ErrInvalid, "cannot receive: btrfs receive made %d entries, not the one subvolume '%s'",
			len(after)-entriesBefore, h.name)
	}
	got, err := p.btrfs.show(ctx, filepath.Join(directory, h.name))
	if err != nil {
		return err
	}
	if !got.readOnly || got.receivedUUID != h.uuid {
		return refuse(backend.ErrInvalid, "cannot receive: '%s' is not a finished receive of %s (read-only %v, received UUID %q)",
			h.name, h.uuid, got.readOnly, got.receivedUUID)
	}
	return nil
}

// deleteNew deletes the entries of a directory that were not in before.
func (p *Pool) deleteNew(ctx context.Context, directory string, before []os.DirEntry) error {
	after, err := os.ReadDir(directory)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range after {
		if slices.ContainsFunc(before, func(b os.DirEntry) bool { return b.Name() == e.Name() }) {
			continue
		}
		path := filepath.Join(directory, e.Name())
		if _, showErr := p.btrfs.show(ctx, path); showErr == nil {
			errs = append(errs, p.btrfs.deleteSubvolumes(ctx, path))
		} else {
			errs = append(errs, os.RemoveAll(path))
		}
	}
	return errors.Join(errs...)
}
