package zfs

import (
	"fmt"

	"github.com/baton-dr/baton/storage/backend"
)

// Snapshot freezes the volume's synced content under a name: the snapshot
// takes a reference on the head's root, and the head copies paths from then
// on. Unsynced writes stay in the cache, outside the snapshot.
func (p *Pool) Snapshot(volumeName, snapshotName string) error {
	if err := p.fault(OpSnapshot, volumeName+"@"+snapshotName); err != nil {
		return err
	}
	v, err := p.lookupVolume(volumeName)
	if err != nil {
		return err
	}
	path := p.snapshotPath(volumeName, snapshotName)
	context := fmt.Sprintf("cannot create snapshot '%s'", path)
	if why, ok := p.checkName(snapshotName, path); !ok {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: %s", context, why)
	}
	if v.findSnapshot(snapshotName) != nil {
		return backend.Refusal(backend.ErrExists, tool, "%s: dataset already exists", context)
	}
	// Once the snapshot shares every block, nothing is unique to the head and
	// every unsynced write needs a new block: a thick volume's reservation
	// has to be found again, as dsl_dataset_snapshot_reserve_space demands.
	next := v.charge()
	next.uniqueBytes = 0
	next.pendingExtraBytes = uint64(len(v.pending)) * v.blockSizeBytes
	if !p.fits(0, v, next) {
		return outOfSpace(context)
	}
	p.takeSnapshot(v, snapshotName, p.newGUID())
	return nil
}

// takeSnapshot records the head as a snapshot; the caller checked the space.
func (p *Pool) takeSnapshot(v *volume, name string, guid uint64) *snapshot {
	s := &snapshot{volume: v, name: name, guid: guid, createTxg: p.nextTxg(), root: v.head, sizeBytes: v.sizeBytes}
	p.retainNode(v.head)
	v.snapshots = append(v.snapshots, s)
	v.uniqueBytes = 0
	v.pendingExtraBytes = uint64(len(v.pending)) * v.blockSizeBytes
	return s
}

// DestroySnapshot destroys a snapshot that no clone depends on.
func (p *Pool) DestroySnapshot(volumeName, snapshotName string) error {
	if err := p.fault(OpDestroySnapshot, volumeName+"@"+snapshotName); err != nil {
		return err
	}
	v, err := p.lookupVolume(volumeName)
	if err != nil {
		return err
	}
	s := v.findSnapshot(snapshotName)
	if s == nil {
		return backend.Refusal(backend.ErrNotFound, tool, "could not find any snapshots to destroy; check snapshot names.")
	}
	if s.clones > 0 {
		return backend.Refusal(backend.ErrBusy, tool, "cannot destroy '%s': snapshot has dependent clones",
			p.snapshotPath(volumeName, snapshotName))
	}
	kept := v.snapshots[:0]
	for _, other := range v.snapshots {
		if other != s {
			kept = append(kept, other)
		}
	}
	v.snapshots = kept
	p.releaseNode(s.root)
	v.recount()
	p.nextTxg()
	return nil
}

// Clone creates a thin volume whose head shares the snapshot's tree.
func (p *Pool) Clone(volumeName, snapshotName, target string) error {
	if err := p.fault(OpClone, target); err != nil {
		return err
	}
	_, s, err := p.lookupSnapshot(volumeName, snapshotName)
	if err != nil {
		return err
	}
	context := fmt.Sprintf("cannot create '%s'", p.datasetPath(target))
	if why, ok := p.checkName(target, p.datasetPath(target)); !ok {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: %s", context, why)
	}
	if _, ok := p.volumes[target]; ok {
		return backend.Refusal(backend.ErrExists, tool, "%s: dataset already exists", context)
	}
	p.cloneSnapshot(s, target)
	return nil
}

// cloneSnapshot creates the clone; a clone takes no space until written.
func (p *Pool) cloneSnapshot(s *snapshot, target string) *volume {
	c := &volume{
		name:           target,
		sizeBytes:      s.sizeBytes,
		blockSizeBytes: s.volume.blockSizeBytes,
		provisioning:   backend.Thin,
		origin:         s,
		head:           s.root,
		pending:        map[uint64]*block{},
		modifiedTxg:    p.nextTxg(),
	}
	p.retainNode(s.root)
	s.clones++
	p.volumes[target] = c
	return c
}

// Rollback makes the head the latest snapshot again, discarding synced and
// unsynced writes since. Rolling back past a later snapshot is refused.
func (p *Pool) Rollback(volumeName, snapshotName string) error {
	if err := p.fault(OpRollback, volumeName+"@"+snapshotName); err != nil {
		return err
	}
	v, s, err := p.lookupSnapshot(volumeName, snapshotName)
	if err != nil {
		return err
	}
	if s != v.latest() {
		return backend.Refusal(backend.ErrBusy, tool, "cannot rollback to '%s': more recent snapshots or bookmarks exist",
			p.snapshotPath(volumeName, snapshotName))
	}
	before := p.allocatedBytes()
	p.retainNode(s.root)
	p.releaseNode(v.head)
	v.head = s.root
	v.sizeBytes = s.sizeBytes
	v.pending = map[uint64]*block{}
	v.uniqueBytes = 0
	v.pendingExtraBytes = 0
	v.modifiedTxg = s.createTxg // the head is the snapshot again
	p.nextTxg()
	if p.allocatedBytes() > before {
		panic("zfs: a rollback raised the allocation")
	}
	return nil
}
