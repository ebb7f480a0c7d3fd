package drbd

import (
	"encoding/binary"
	"hash/fnv"
	"maps"
	"slices"

	"github.com/baton-dr/baton/storage/backend"
)

// metadata is one replica's DRBD metadata: the superblock on its backing
// volume plus the per-peer bitmaps. It outlives the replica's runtime state
// (Down, Up, crashes); the Cluster keeps it by node and volume.
type metadata struct {
	resource string
	volume   string
	sb       superblock
	// bitmapUUID[peer] is the data generation the peer was last known to have,
	// set when it started missing writes; 0 while it misses nothing.
	bitmapUUID map[string]uint64
	// bitmap[peer] holds the blocks the peer is out of sync with.
	bitmap map[string]*blockSet
	// unsynced holds the blocks written to the backing volume since its last
	// flush: DRBD's activity log marks them out of sync after an unclean
	// shutdown, because the volume may have lost them.
	unsynced blockSet
	// al is the activity log of the replica's own writes (activitylog.go).
	al activityLog
	// crashed: the replica went down uncleanly and has not handshaken since;
	// with equal generations its peers give it the blocks it may have lost.
	crashed bool
}

func newMetadata(resource, volume string, sb superblock) *metadata {
	return &metadata{resource: resource, volume: volume, sb: sb,
		bitmapUUID: map[string]uint64{}, bitmap: map[string]*blockSet{}}
}

func (m *metadata) bitmapFor(peer string) *blockSet { return blockSetOf(m.bitmap, peer) }

// pushHistory records a former current UUID, newest first.
func (m *metadata) pushHistory(uuid uint64) {
	if uuid == 0 {
		return
	}
	copy(m.sb.history[1:], m.sb.history[:historyLength-1])
	m.sb.history[0] = uuid
}

// rotate starts a new data generation: the old current UUID becomes the
// bitmap UUID of every listed peer that was not missing writes yet, so their
// bitmaps from now on say exactly what they miss.
func (m *metadata) rotate(uuid uint64, missing []string) {
	old := m.sb.current
	for _, peer := range missing {
		if m.bitmapUUID[peer] == 0 && old != 0 {
			m.bitmapUUID[peer] = old
		}
	}
	m.pushHistory(old)
	m.sb.current = uuid
}

// ancestors are the generations this replica's data descends from.
func (m *metadata) ancestors() []uint64 {
	var out []uint64
	for _, h := range m.sb.history {
		if h != 0 {
			out = append(out, h)
		}
	}
	for _, peer := range slices.Sorted(maps.Keys(m.bitmapUUID)) {
		if u := m.bitmapUUID[peer]; u != 0 {
			out = append(out, u)
		}
	}
	return out
}

// markMissing records blocks in the bitmaps of peers that did not get them.
func (m *metadata) markMissing(first, n uint64, missing []string) {
	for _, peer := range missing {
		m.bitmapFor(peer).setRange(first, n)
	}
}

// uuidMinter mints data generation UUIDs and metadata serials: a counter
// hashed with the site, so runs are reproducible and two sites never collide.
type uuidMinter struct {
	origin  uint64
	counter uint64
}

func newMinter(site string) uuidMinter {
	h := fnv.New64a()
	h.Write([]byte(site))
	return uuidMinter{origin: h.Sum64()}
}

func (u *uuidMinter) next() uint64 {
	u.counter++
	h := fnv.New64a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], u.origin)
	binary.BigEndian.PutUint64(b[8:], u.counter)
	h.Write(b[:])
	v := h.Sum64() &^ 1 // DRBD keeps the lowest bit for a flag; so do we
	if v == 0 {
		v = 2
	}
	return v
}

// validDisk reports whether a persisted disk state is one metadata can hold.
func validDisk(d backend.DiskState) bool {
	return d == backend.Inconsistent || d == backend.Outdated || d == backend.UpToDate
}
