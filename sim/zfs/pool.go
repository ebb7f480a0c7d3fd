package zfs

import (
	"sort"
	"strconv"

	"github.com/baton-dr/baton/storage/backend"
)

// tool names the tool whose words the refusals carry.
const tool = "zfs"

// Pool is a simulated ZFS pool. It is not safe for concurrent use: the
// simulation runs on one goroutine.
type Pool struct {
	name           string
	sizeBytes      uint64
	blockSizeBytes uint64
	guids          func() uint64

	// txg orders every change, as ZFS's transaction groups do: snapshots take
	// their CreateTxg from it and volumes record the txg of their last change.
	txg uint64
	// liveBytes is the size of every distinct block referenced by any tree.
	liveBytes uint64
	volumes   map[string]*volume
	// generation moves on at every Crash; a Device opened before is stale.
	generation uint64
	faults     faults
	// filling: a runaway writer holds every free block (filler.go).
	filling bool
}

var _ backend.Pool = (*Pool)(nil)

// volume is one zvol: its head tree, its snapshots and its volatile cache.
type volume struct {
	name           string
	sizeBytes      uint64
	blockSizeBytes uint64
	provisioning   backend.Provisioning
	origin         *snapshot // the snapshot a clone was made from
	readOnly       bool

	head        *node
	snapshots   []*snapshot // oldest first
	modifiedTxg uint64      // the txg of the last change to the head's content or size
	// uniqueBytes are the synced bytes only the head references.
	uniqueBytes uint64
	// pending holds unsynced writes by block index; its blocks belong to the
	// cache alone and may change in place.
	pending map[uint64]*block
	// pendingExtraBytes is the space the pending blocks will take beyond the
	// blocks they replace: a pending block over a block the head holds alone
	// replaces it; any other takes a new block.
	pendingExtraBytes uint64
	openDevices       int
}

// snapshot is a frozen tree of a volume.
type snapshot struct {
	volume    *volume
	name      string
	guid      uint64
	createTxg uint64
	root      *node
	sizeBytes uint64
	clones    int // volumes cloned from this snapshot
	// unique caches snapshotUniqueBytes for the neighbours it was computed
	// between. Snapshot roots are frozen, so the figure stands while both
	// neighbours are snapshots (or the origin); against the head, which
	// changes in place, it is never cached.
	unique          uint64
	uniqueNeighbour [2]*node
	// uniqueAgainstTxg is the head's modifiedTxg the figure of the newest
	// snapshot was computed against: the head changes in place, its txg
	// tells when.
	uniqueAgainstTxg uint64
}

// New creates an empty pool. It panics on options no pool can have.
func New(options Options) *Pool {
	options = options.withDefaults()
	return &Pool{
		name:           options.Name,
		sizeBytes:      options.SizeBytes,
		blockSizeBytes: options.BlockSizeBytes,
		guids:          options.GUIDs,
		volumes:        map[string]*volume{},
	}
}

// Name is the pool's name.
func (p *Pool) Name() string { return p.name }

// SetSizeBytes changes the pool's capacity, to simulate a disk filling up (or
// freed). A capacity below the allocation refuses every growth and frees
// nothing.
func (p *Pool) SetSizeBytes(sizeBytes uint64) { p.sizeBytes = sizeBytes }

// nextTxg opens the transaction group of one change.
func (p *Pool) nextTxg() uint64 {
	p.txg++
	return p.txg
}

func (p *Pool) notFound(path string) error {
	return backend.Refusal(backend.ErrNotFound, tool, "cannot open '%s': dataset does not exist", path)
}

// lookupVolume finds a volume or refuses as `zfs` does for a missing dataset.
func (p *Pool) lookupVolume(name string) (*volume, error) {
	v, ok := p.volumes[name]
	if !ok {
		return nil, p.notFound(p.datasetPath(name))
	}
	return v, nil
}

func (v *volume) findSnapshot(name string) *snapshot {
	for _, s := range v.snapshots {
		if s.name == name {
			return s
		}
	}
	return nil
}

func (v *volume) latest() *snapshot {
	if len(v.snapshots) == 0 {
		return nil
	}
	return v.snapshots[len(v.snapshots)-1]
}

// lookupSnapshot finds a volume's snapshot or refuses as `zfs` does.
func (p *Pool) lookupSnapshot(volumeName, snapshotName string) (*volume, *snapshot, error) {
	v, err := p.lookupVolume(volumeName)
	if err != nil {
		return nil, nil, err
	}
	s := v.findSnapshot(snapshotName)
	if s == nil {
		return nil, nil, p.notFound(p.snapshotPath(volumeName, snapshotName))
	}
	return v, s, nil
}

// sortedVolumes lists the volumes by name, the one order outputs may follow.
func (p *Pool) sortedVolumes() []*volume {
	names := make([]string, 0, len(p.volumes))
	for name := range p.volumes {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]*volume, len(names))
	for i, name := range names {
		out[i] = p.volumes[name]
	}
	return out
}

// snapshotByGUID finds a snapshot anywhere in the pool, scanning volumes in
// name order so that a GUID held twice resolves the same way on every run.
func (p *Pool) snapshotByGUID(guid uint64) *snapshot {
	for _, v := range p.sortedVolumes() {
		for _, s := range v.snapshots {
			if s.guid == guid {
				return s
			}
		}
	}
	return nil
}

// newGUID draws a GUID that no snapshot of the pool holds.
func (p *Pool) newGUID() uint64 {
	for attempt := 0; attempt < 64; attempt++ {
		guid := p.guids()
		if guid != 0 && p.snapshotByGUID(guid) == nil {
			return guid
		}
	}
	panic("zfs: the GUID source keeps repeating itself")
}

func formatGUID(guid uint64) string { return strconv.FormatUint(guid, 10) }

// Volume describes one volume.
func (p *Pool) Volume(name string) (backend.VolumeInfo, error) {
	if err := p.fault(OpList, name); err != nil {
		return backend.VolumeInfo{}, err
	}
	v, err := p.lookupVolume(name)
	if err != nil {
		return backend.VolumeInfo{}, err
	}
	return p.info(v), nil
}

func (p *Pool) info(v *volume) backend.VolumeInfo {
	info := backend.VolumeInfo{
		Name:         v.name,
		SizeBytes:    v.sizeBytes,
		UsedBytes:    v.uniqueBytes + v.pendingExtraBytes,
		Provisioning: v.provisioning,
		ReadOnly:     v.readOnly,
	}
	if v.origin != nil {
		info.Origin = v.origin.volume.name + "@" + v.origin.name
	}
	return info
}

// Volumes describes every volume, sorted by name.
func (p *Pool) Volumes() ([]backend.VolumeInfo, error) {
	if err := p.fault(OpList, ""); err != nil {
		return nil, err
	}
	out := []backend.VolumeInfo{}
	for _, v := range p.sortedVolumes() {
		out = append(out, p.info(v))
	}
	return out, nil
}

// Snapshots lists a volume's snapshots, oldest first.
func (p *Pool) Snapshots(volumeName string) ([]backend.SnapshotInfo, error) {
	if err := p.fault(OpList, volumeName); err != nil {
		return nil, err
	}
	v, err := p.lookupVolume(volumeName)
	if err != nil {
		return nil, err
	}
	out := make([]backend.SnapshotInfo, len(v.snapshots))
	for i, s := range v.snapshots {
		out[i] = backend.SnapshotInfo{
			Volume:    v.name,
			Name:      s.name,
			GUID:      formatGUID(s.guid),
			CreateTxg: s.createTxg,
			UsedBytes: v.snapshotUniqueBytes(i),
		}
	}
	return out, nil
}

// snapshotUniqueBytes is what only the i-th snapshot holds: the blocks born
// since its predecessor (or its origin) that its successor (or the head) no
// longer holds, the space ZFS reports as the snapshot's "used".
func (v *volume) snapshotUniqueBytes(i int) uint64 {
	s := v.snapshots[i]
	var before *node
	switch {
	case i > 0:
		before = v.snapshots[i-1].root
	case v.origin != nil:
		before = v.origin.root
	}
	after := v.head
	frozen := i+1 < len(v.snapshots)
	if frozen {
		after = v.snapshots[i+1].root
	}
	if s.uniqueNeighbour == [2]*node{before, after} && (frozen || s.uniqueAgainstTxg == v.modifiedTxg) {
		return s.unique
	}
	var total uint64
	diff(before, s.root, topLevel, 0, func(index uint64, b *block) {
		if lookup(after, index) != b {
			total += uint64(len(b.data))
		}
	})
	s.unique, s.uniqueNeighbour, s.uniqueAgainstTxg = total, [2]*node{before, after}, v.modifiedTxg
	return total
}

// Usage reports the pool's space.
func (p *Pool) Usage() (backend.Usage, error) {
	if err := p.fault(OpList, ""); err != nil {
		return backend.Usage{}, err
	}
	allocated := p.allocatedBytes() + p.fillerBytes()
	usage := backend.Usage{SizeBytes: p.sizeBytes, AllocatedBytes: allocated}
	if allocated < p.sizeBytes {
		usage.FreeBytes = p.sizeBytes - allocated
	}
	return usage, nil
}
