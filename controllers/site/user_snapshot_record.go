package site

import (
	"fmt"

	v1 "github.com/baton-dr/baton/api/v1alpha1"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// The CSI snapshots a member records (core.Volume.UserSnapshots), kept in its
// Volume's status: without them CreateSnapshot is not idempotent by name, a
// snapshot never becomes ready and a volume restored from one waits for ever.

func userSnapshots(snapshots []core.UserSnapshot) ([]v1.UserSnapshot, error) {
	var out []v1.UserSnapshot
	for _, u := range snapshots {
		if !chain.IsUUID(u.Ref.Snapshot) {
			return nil, fmt.Errorf("%w: snapshot %q of %s is not a UUID", ErrUnrepresentable, u.Ref.Snapshot, u.Ref.Member)
		}
		size, err := toInt64("snapshot sizeBytes", u.SizeBytes)
		if err != nil {
			return nil, err
		}
		out = append(out, v1.UserSnapshot{SnapshotID: v1.UUID(u.Ref.Snapshot), Member: v1.VolumeHandle(u.Ref.Member.String()),
			CSIName: u.Name, ForClone: u.ForClone, Root: v1.VolumeHandle(u.Root.String()), SizeBytes: size,
			CreatedAt: v1.NewTimestamp(u.CreatedAt), Deleting: u.Deleting})
	}
	return out, nil
}

func userSnapshotRecords(snapshots []v1.UserSnapshot) ([]core.UserSnapshot, error) {
	var out []core.UserSnapshot
	for _, s := range snapshots {
		member, err := chain.ParseRef(string(s.Member))
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", s.SnapshotID, err)
		}
		root, err := chain.ParseRef(string(s.Root))
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", s.SnapshotID, err)
		}
		size, err := toUint64("snapshot sizeBytes", s.SizeBytes)
		if err != nil {
			return nil, err
		}
		created, err := s.CreatedAt.Time()
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", s.SnapshotID, err)
		}
		out = append(out, core.UserSnapshot{Ref: core.SnapshotRef{Member: member, Snapshot: string(s.SnapshotID)}, Name: s.CSIName,
			ForClone: s.ForClone, Root: root, SizeBytes: size, CreatedAt: created, Deleting: s.Deleting})
	}
	return out, nil
}
