package zfs

import (
	"io"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// Send streams a snapshot: whole when base is empty, else the blocks that
// differ from base by identity. base names a snapshot of the same volume
// ("s1") or, for a clone, its origin or an earlier snapshot of the origin's
// lineage ("volume@s1"), which makes a clone stream.
func (p *Pool) Send(volumeName, base, snapshotName string) (io.ReadCloser, error) {
	if err := p.fault(OpSend, volumeName+"@"+snapshotName); err != nil {
		return nil, err
	}
	v, s, err := p.lookupSnapshot(volumeName, snapshotName)
	if err != nil {
		return nil, err
	}
	header := streamHeader{
		blockSizeBytes:  v.blockSizeBytes,
		volumeSizeBytes: s.sizeBytes,
		snapshotGUID:    s.guid,
		snapshot:        s.name,
	}
	var from *node
	if base != "" {
		b, err := p.sendBase(v, s, base)
		if err != nil {
			return nil, err
		}
		from = b.root
		header.baseGUID = b.guid
		header.clone = b.volume != v
	}
	var records []record
	diff(from, s.root, topLevel, 0, func(index uint64, b *block) {
		records = append(records, record{index: index, data: b.data})
	})
	header.blockCount = uint64(len(records))
	return newStream(header, records), nil
}

// sendBase resolves an incremental source and checks that it comes before the
// snapshot in the snapshot's lineage, as libzfs's snapshot_is_before does.
func (p *Pool) sendBase(v *volume, s *snapshot, base string) (*snapshot, error) {
	baseVolume, baseName := v.name, base
	if at := strings.IndexByte(base, '@'); at >= 0 {
		baseVolume, baseName = base[:at], base[at+1:]
	}
	_, b, err := p.lookupSnapshot(baseVolume, baseName)
	if err != nil {
		return nil, err
	}
	if !before(b, s) {
		return nil, backend.Refusal(backend.ErrInvalid, tool, "warning: cannot send '%s': not an earlier snapshot from the same fs",
			p.snapshotPath(v.name, s.name))
	}
	return b, nil
}

// before reports whether earlier precedes later in later's lineage: an older
// snapshot of the same volume, or, through the chain of origins, the origin
// of a clone or an older snapshot of the origin's volume.
func before(earlier, later *snapshot) bool {
	if earlier.createTxg >= later.createTxg {
		return false
	}
	for v := later.volume; v != nil; v = v.origin.volume {
		if earlier.volume == v {
			return true
		}
		if v.origin == nil {
			return false
		}
		if v.origin == earlier {
			return true
		}
		if earlier.createTxg > v.origin.createTxg {
			return false
		}
	}
	return false
}
