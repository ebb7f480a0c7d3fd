package drbd

// DRBD's activity log: before a Primary writes to an area of its backing
// device it records the area's extent in the on-disk activity log, and it
// retires extents only when it needs room for others (least recently used
// first) or when the disk is detached cleanly. After an unclean end -- a
// crash, a power cut -- the next attach (drbdadm up runs `drbdmeta apply-al`)
// marks every extent still in the log out of sync toward every peer, flushed
// or not: DRBD cannot tell which of those writes reached its disk. Seen on
// DRBD 8.4.11 (ci/vmtest TestForcedPromotionAfterPrimaryPowerCut): a Primary
// that wrote 16 MiB, flushed, and lost power came back with 4096 bits (16
// MiB) set in its bitmap.
//
// DRBD 8.4 logs a Primary's own writes only; a Secondary logs the writes it
// receives only when its peer has no disk, which the simulation leaves out.

const (
	// alExtentBytes is what one activity log extent covers (AL_EXTENT_SIZE).
	alExtentBytes = 4 << 20
	// alExtents is DRBD 8.4's default al-extents: how many extents the log
	// holds before it retires the least recently used.
	alExtents = 1237
)

// activityLog holds the extents a replica's writes made hot, each with the
// sequence number of its last use.
type activityLog struct {
	lastUse map[uint64]uint64
	seq     uint64
}

// touch records a write to blocks [first, first+n).
func (l *activityLog) touch(first, n uint64) {
	if n == 0 {
		return
	}
	if l.lastUse == nil {
		l.lastUse = map[uint64]uint64{}
	}
	const blocksPerExtent = alExtentBytes / blockBytes
	for e := first / blocksPerExtent; e <= (first+n-1)/blocksPerExtent; e++ {
		l.seq++
		l.lastUse[e] = l.seq
	}
	for len(l.lastUse) > alExtents {
		l.retireLeastRecent()
	}
}

func (l *activityLog) retireLeastRecent() {
	var oldest, oldestUse uint64
	found := false
	for e, use := range l.lastUse { // sequence numbers are unique: the minimum does not depend on order
		if !found || use < oldestUse {
			oldest, oldestUse, found = e, use, true
		}
	}
	delete(l.lastUse, oldest)
}

// blocks are the blocks of every extent in the log, up to the device's end.
func (l *activityLog) blocks(usableBytes uint64) *blockSet {
	const blocksPerExtent = alExtentBytes / blockBytes
	end := usableBytes / blockBytes
	out := &blockSet{}
	for e := range l.lastUse {
		first := e * blocksPerExtent
		if first >= end {
			continue
		}
		out.setRange(first, min(blocksPerExtent, end-first))
	}
	return out
}

// clear empties the log, as a clean detach leaves it.
func (l *activityLog) clear() { clear(l.lastUse) }
