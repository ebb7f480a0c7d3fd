package zfs

import (
	"strconv"

	"github.com/baton-dr/baton/storage/backend"
)

// Snapshot takes a snapshot. zfs snapshots what reached the pool: the
// caller syncs its device first.
func (p *Pool) Snapshot(volume, snapshot string) error {
	return p.onSnapshot("snapshot", "create snapshot", volume, snapshot)
}

// DestroySnapshot destroys one snapshot; zfs refuses one with dependent
// clones (ErrBusy) and a missing one ("could not find any snapshots to
// destroy", ErrNotFound).
func (p *Pool) DestroySnapshot(volume, snapshot string) error {
	return p.onSnapshot("destroy", "destroy", volume, snapshot)
}

// Clone creates target as a clone of volume@snapshot: thin, as zfs clones
// are, and writable whatever the origin's readonly says.
func (p *Pool) Clone(volume, snapshot, target string) error {
	path := p.snapshotPath(volume, snapshot)
	if err := p.checkSnapshotName("create", path, volume, snapshot); err != nil {
		return err
	}
	dataset := p.DatasetPath(target)
	if err := checkName("create", dataset, target); err != nil {
		return err
	}
	_, err := p.zfs("clone", path, dataset)
	return err
}

// Rollback rolls a volume back to its latest snapshot; without -r, zfs
// refuses to destroy later snapshots ("more recent snapshots or bookmarks
// exist", ErrBusy).
func (p *Pool) Rollback(volume, snapshot string) error {
	return p.onSnapshot("rollback", "rollback to", volume, snapshot)
}

// Snapshots lists a volume's snapshots, oldest first (by createtxg).
func (p *Pool) Snapshots(volume string) ([]backend.SnapshotInfo, error) {
	dataset := p.DatasetPath(volume)
	if err := checkName("open", dataset, volume); err != nil {
		return nil, err
	}
	out, err := p.zfs("list", "-H", "-p", "-t", "snapshot", "-o", snapshotColumns, "-s", "createtxg", "-d", "1", dataset)
	if err != nil {
		return nil, err
	}
	rows, err := parseSnapshots(out)
	if err != nil {
		return nil, errUnexpected("list", err)
	}
	list := make([]backend.SnapshotInfo, 0, len(rows))
	for _, row := range rows {
		if row.dataset != dataset {
			continue
		}
		list = append(list, backend.SnapshotInfo{
			Volume:    volume,
			Name:      row.name,
			GUID:      strconv.FormatUint(row.guid, 10),
			CreateTxg: row.createTxg,
			UsedBytes: row.usedBytes,
		})
	}
	return list, nil
}

// onSnapshot runs `zfs <command> volume@snapshot` once the names pass
// zfs's own rules; a name that does not is refused as zfs would word it, with
// verb ("cannot <verb> ...").
func (p *Pool) onSnapshot(command, verb, volume, snapshot string) error {
	path := p.snapshotPath(volume, snapshot)
	if err := p.checkSnapshotName(verb, path, volume, snapshot); err != nil {
		return err
	}
	_, err := p.zfs(command, path)
	return err
}

func (p *Pool) checkSnapshotName(verb, path, volume, snapshot string) error {
	if err := checkName(verb, path, volume); err != nil {
		return err
	}
	return checkName(verb, path, snapshot)
}
