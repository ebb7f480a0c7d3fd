package btrfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// lookup finds a volume and reads its metadata; a missing volume is
// ErrNotFound in the words of context. A bad name is never found, so no
// name reaches a path outside the volume's directory.
func (p *Pool) lookup(volume, action string) (volumeMeta, error) {
	if _, ok := checkName(volume); !ok {
		return volumeMeta{}, refuse(backend.ErrNotFound, "%s: dataset does not exist", action)
	}
	meta, err := readMeta(p.layout.meta(volume))
	if errors.Is(err, os.ErrNotExist) {
		return meta, refuse(backend.ErrNotFound, "%s: dataset does not exist", action)
	}
	return meta, err
}

// snapshot is one snapshot of a volume as btrfs lists it.
type snapshot struct {
	volume, name string
	subvolume
}

// allSnapshots lists the snapshots of every volume, each volume's oldest
// first. Only read-only subvolumes are listed: a receive that has not
// finished leaves a writable one, which is no snapshot yet.
func (p *Pool) allSnapshots(ctx context.Context) (map[string][]snapshot, error) {
	list, err := p.btrfs.list(ctx, p.layout.mount(), true)
	if err != nil {
		return nil, err
	}
	byVolume := map[string][]snapshot{}
	for _, s := range list {
		parts := strings.Split(s.path, "/")
		if len(parts) != 4 || parts[0] != volumesName || parts[2] != snapsName {
			continue
		}
		byVolume[parts[1]] = append(byVolume[parts[1]], snapshot{volume: parts[1], name: parts[3], subvolume: s})
	}
	for _, list := range byVolume {
		slices.SortFunc(list, func(a, b snapshot) int {
			return cmp.Or(cmp.Compare(a.cgeneration, b.cgeneration), cmp.Compare(a.id, b.id))
		})
	}
	return byVolume, nil
}

// snapshotsOf lists a volume's snapshots, oldest first.
func (p *Pool) snapshotsOf(ctx context.Context, volume string) ([]snapshot, error) {
	all, err := p.allSnapshots(ctx)
	return all[volume], err
}

func findSnapshot(list []snapshot, name string) (snapshot, bool) {
	i := slices.IndexFunc(list, func(s snapshot) bool { return s.name == name })
	if i < 0 {
		return snapshot{}, false
	}
	return list[i], true
}

// Volume describes one volume. UsedBytes are the bytes of extents only the
// volume's head file references (btrfs filesystem du's "Exclusive"): what it
// gained since its latest snapshot, plus a thick volume's preallocated
// extents that no snapshot shares yet. Metadata is not counted.
func (p *Pool) Volume(name string) (backend.VolumeInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return backend.VolumeInfo{}, err
	}
	meta, err := p.lookup(name, fmt.Sprintf("cannot open '%s'", name))
	if err != nil {
		return backend.VolumeInfo{}, err
	}
	infos, err := p.describe(context.Background(), map[string]volumeMeta{name: meta})
	if err != nil {
		return backend.VolumeInfo{}, err
	}
	return infos[0], nil
}

// Volumes describes every volume, sorted by name.
func (p *Pool) Volumes() ([]backend.VolumeInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return nil, err
	}
	metas, err := p.allMeta()
	if err != nil {
		return nil, err
	}
	return p.describe(context.Background(), metas)
}

// allMeta reads every volume's metadata, by name.
func (p *Pool) allMeta() (map[string]volumeMeta, error) {
	entries, err := os.ReadDir(p.layout.volumes())
	if err != nil {
		return nil, err
	}
	metas := map[string]volumeMeta{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		meta, err := readMeta(p.layout.meta(e.Name()))
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", e.Name(), err)
		}
		metas[e.Name()] = meta
	}
	return metas, nil
}

// describe builds the infos of volumes, sorted by name, with one du.
func (p *Pool) describe(ctx context.Context, metas map[string]volumeMeta) ([]backend.VolumeInfo, error) {
	names := slices.Sorted(maps.Keys(metas))
	files := make([]string, len(names))
	for i, name := range names {
		files[i] = p.layout.data(name)
	}
	exclusive, err := p.btrfs.exclusiveBytes(ctx, files...)
	if err != nil {
		return nil, err
	}
	infos := make([]backend.VolumeInfo, len(names))
	for i, name := range names {
		stat, err := os.Stat(files[i])
		if err != nil {
			return nil, err
		}
		meta := metas[name]
		infos[i] = backend.VolumeInfo{
			Name:         name,
			SizeBytes:    uint64(stat.Size()),
			UsedBytes:    exclusive[files[i]],
			Provisioning: meta.provisioning(),
			Origin:       meta.Origin,
			ReadOnly:     meta.ReadOnly,
		}
	}
	return infos, nil
}

// Snapshots lists a volume's snapshots, oldest first. CreateTxg is the
// transaction that created the snapshot's subvolume; UsedBytes are the
// bytes of extents only the snapshot's file references.
func (p *Pool) Snapshots(volume string) ([]backend.SnapshotInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return nil, err
	}
	ctx := context.Background()
	if _, err := p.lookup(volume, fmt.Sprintf("cannot open '%s'", volume)); err != nil {
		return nil, err
	}
	list, err := p.snapshotsOf(ctx, volume)
	if err != nil {
		return nil, err
	}
	infos, err := p.snapshotInfos(ctx, map[string][]snapshot{volume: list})
	return infos[volume], err
}

// AllSnapshots lists every volume's snapshots, as Snapshots does, from one
// listing of the filesystem (backend.SnapshotLister).
func (p *Pool) AllSnapshots() (map[string][]backend.SnapshotInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return nil, err
	}
	ctx := context.Background()
	all, err := p.allSnapshots(ctx)
	if err != nil {
		return nil, err
	}
	return p.snapshotInfos(ctx, all)
}

// snapshotInfos describes listed snapshots, by volume, with one reading of
// their exclusive bytes.
func (p *Pool) snapshotInfos(ctx context.Context, byVolume map[string][]snapshot) (map[string][]backend.SnapshotInfo, error) {
	var files []string
	for volume, list := range byVolume {
		for _, s := range list {
			files = append(files, p.layout.snapshotData(volume, s.name))
		}
	}
	exclusive, err := p.btrfs.exclusiveBytes(ctx, files...)
	if err != nil {
		return nil, err
	}
	infos := make(map[string][]backend.SnapshotInfo, len(byVolume))
	for volume, list := range byVolume {
		infos[volume] = make([]backend.SnapshotInfo, len(list))
		for i, s := range list {
			infos[volume][i] = backend.SnapshotInfo{Volume: volume, Name: s.name, GUID: s.guid(),
				CreateTxg: s.cgeneration, UsedBytes: exclusive[p.layout.snapshotData(volume, s.name)]}
		}
	}
	return infos, nil
}

// Usage reports the pool's space: SizeBytes is the image's size, FreeBytes
// what data can still take (statfs's available blocks), and AllocatedBytes
// the rest: data, thick volumes' preallocations, metadata and the
// filesystem's own chunks.
func (p *Pool) Usage() (backend.Usage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return backend.Usage{}, err
	}
	// btrfs settles its space accounting at a transaction's commit: until
	// then a preallocation or a delete may not show.
	ctx := context.Background()
	if err := p.btrfs.sync(ctx, p.layout.mount()); err != nil {
		return backend.Usage{}, err
	}
	u, err := p.btrfs.usage(ctx, p.layout.mount())
	if err != nil {
		return backend.Usage{}, err
	}
	free := min(u.freeBytes, u.deviceBytes)
	return backend.Usage{SizeBytes: u.deviceBytes, AllocatedBytes: u.deviceBytes - free, FreeBytes: free}, nil
}

// staging makes a fresh directory under .staging for an operation to build
// in or tear down in.
func (p *Pool) staging() (string, error) {
	return os.MkdirTemp(p.layout.staging(), "op-")
}
