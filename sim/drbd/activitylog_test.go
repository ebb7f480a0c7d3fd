package drbd

import "testing"

// The log holds alExtents extents and retires the least recently used one;
// its blocks are whole extents, cut at the device's end.
func TestActivityLogRetiresLeastRecentlyUsed(t *testing.T) {
	const blocksPerExtent = alExtentBytes / blockBytes
	var l activityLog
	l.touch(0, 1) // extent 0
	for e := uint64(1); e < alExtents; e++ {
		l.touch(e*blocksPerExtent, 1)
	}
	l.touch(0, 1)                         // extent 0 used again: extent 1 is now the oldest
	l.touch(alExtents*blocksPerExtent, 1) // one extent too many
	if len(l.lastUse) != alExtents {
		t.Fatalf("the log holds %d extents, want %d", len(l.lastUse), alExtents)
	}
	if _, ok := l.lastUse[1]; ok {
		t.Error("the least recently used extent was not retired")
	}
	if _, ok := l.lastUse[0]; !ok {
		t.Error("an extent used again was retired")
	}

	var small activityLog
	small.touch(blocksPerExtent-1, 2) // a write across an extent boundary makes both hot
	usable := uint64(alExtentBytes + 3*blockBytes)
	if got := small.blocks(usable).count; got != blocksPerExtent+3 {
		t.Errorf("the log covers %d blocks, want one whole extent and the 3 blocks of the second before the end", got)
	}
	small.clear()
	if got := small.blocks(usable).count; got != 0 {
		t.Errorf("a cleared log still covers %d blocks", got)
	}
}
