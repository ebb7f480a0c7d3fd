package zfs

import (
	"github.com/baton-dr/baton/storage/backend"
)

// SnapshotView is a read-only device over a snapshot's blocks, read in place:
// nothing is copied and nothing is cloned, so a bed's checker can read what a
// snapshot kept (a superseded member's diverged tail) without changing the
// pool it checks -- no clone, no txg, no space, no fault injected. It is the
// checker's, outside the system: the agent never opens one.
//
// Its writes and Syncs are refused; a read after the snapshot was destroyed
// is refused too, since the tree it would read is no longer the snapshot's.
type SnapshotView struct {
	pool     *Pool
	snapshot *snapshot
	path     string
}

var _ backend.Device = (*SnapshotView)(nil)

// ReadSnapshot opens a read-only view of a volume's snapshot.
func (p *Pool) ReadSnapshot(volumeName, snapshotName string) (*SnapshotView, error) {
	_, s, err := p.lookupSnapshot(volumeName, snapshotName)
	if err != nil {
		return nil, err
	}
	if s.root == nil || s.volume.blockSizeBytes == 0 {
		panic("zfs: snapshot " + p.snapshotPath(volumeName, snapshotName) + " has no tree")
	}
	return &SnapshotView{pool: p, snapshot: s, path: p.snapshotPath(volumeName, snapshotName)}, nil
}

// ReadAt reads the snapshot as a clone of it would read before any write:
// the frozen tree over zeros. Reading past the end returns io.EOF.
func (s *SnapshotView) ReadAt(buf []byte, offset int64) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	if offset < 0 {
		return 0, backend.Refusal(backend.ErrInvalid, tool, "%s: Invalid argument", s.path)
	}
	root := s.snapshot.root
	return readBlocks(buf, offset, s.snapshot.sizeBytes, s.snapshot.volume.blockSizeBytes,
		func(index uint64) *block { return lookup(root, index) })
}

// live refuses a view whose snapshot was destroyed (or whose volume was).
func (s *SnapshotView) live() error {
	v := s.snapshot.volume
	if current, ok := s.pool.volumes[v.name]; !ok || current != v || v.findSnapshot(s.snapshot.name) != s.snapshot {
		return backend.Refusal(backend.ErrNotFound, tool, "%s: dataset does not exist", s.path)
	}
	return nil
}

// WriteAt is refused: a snapshot is read-only.
func (s *SnapshotView) WriteAt([]byte, int64) (int, error) {
	return 0, backend.Refusal(backend.ErrRefused, tool, "cannot write '%s': snapshots are read-only", s.path)
}

// Sync is refused: there is nothing a snapshot could make durable.
func (s *SnapshotView) Sync() error {
	return backend.Refusal(backend.ErrRefused, tool, "cannot sync '%s': snapshots are read-only", s.path)
}

// Close releases nothing: the view holds no reference on the pool.
func (s *SnapshotView) Close() error { return nil }
