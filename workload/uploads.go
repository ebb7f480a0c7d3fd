package workload

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// An uploads volume, as a filesystem in ordered mode keeps a media library:
//
//	blocks 0..DirectoryBlocks-1   directory: uploadSlotsPerBlock file entries each
//	then DataBlocks blocks        data ring: a file is a contiguous extent
//
// An upload writes the file's data blocks, Syncs, then the directory block
// holding its entry (which names the write of every data block), and Syncs.
// When the ring or the directory is full, the oldest files are evicted first:
// their entries are cleared and Synced before their blocks are reused.
const (
	maxFileBlocks       = 8
	uploadNameSizeBytes = 24
	uploadEntrySize     = 112
	uploadDirHeader     = 8 // u32 directory block index, 4 reserved
	uploadSlotsPerBlock = (payloadSizeBytes - uploadDirHeader) / uploadEntrySize

	// entry
	entryID    = 0  // u64; 0: a free slot
	entryStart = 8  // u32, relative to the data ring
	entryCount = 12 // u16 blocks
	entrySize  = 16 // u32 bytes
	entryName  = 24 // [24]
	entrySeqs  = 48 // [maxFileBlocks]u64: the write of each data block
	// file data payload
	fileID    = 0  // u64
	filePart  = 8  // u16
	fileParts = 10 // u16
	fileData  = 16
)

// fileEntry is one directory entry.
type fileEntry struct {
	id        uint64
	start     uint32
	blocks    int
	sizeBytes uint32
	name      [uploadNameSizeBytes]byte
	seqs      [maxFileBlocks]uint64
}

type uploads struct {
	layout UploadsLayout
	h      *history
	rng    *rand.Rand

	slots  []fileEntry // id 0: free
	live   []int       // slots of live files, oldest first
	head   uint32      // the next data-ring block to allocate from
	nextID uint64      // never reused, across fail-overs

	// misorderUpload writes the directory entry before the data blocks, a bug
	// the invariant must catch; tests only.
	misorderUpload bool
}

func newUploads(workload, volume string, layout UploadsLayout, rng *rand.Rand) *uploads {
	layout.validate()
	blocks := uint64(layout.DirectoryBlocks + layout.DataBlocks)
	return &uploads{
		layout: layout,
		h:      newHistory(workload, volume, blocks, rng),
		rng:    rng,
		slots:  make([]fileEntry, layout.DirectoryBlocks*uploadSlotsPerBlock),
		nextID: 1,
	}
}

func (u *uploads) spec() VolumeSpec {
	return VolumeSpec{Name: u.h.volumeName, SizeBytes: roundUpToMiB(u.h.sizeBlocks), Files: true}
}

func (u *uploads) hist() *history { return u.h }

func (u *uploads) dataBlock(start uint32, part int) uint64 {
	return uint64(u.layout.DirectoryBlocks) + uint64(start) + uint64(part)
}

// upload stores one file, evicting the oldest files first if it must.
func (u *uploads) upload(now time.Time, dev backend.Device) (string, error) {
	blocks := 1 + u.rng.IntN(maxFileBlocks)
	start := u.head
	if int(start)+blocks > u.layout.DataBlocks {
		start = 0 // the ring wraps; the tail is left unused, as an extent allocator would
	}
	evicted, err := u.evict(now, dev, start, blocks)
	operation := fmt.Sprintf("upload file %d (%d blocks, %d evicted)", u.nextID, blocks, evicted)
	if err != nil {
		return operation, err
	}
	slot := slices.IndexFunc(u.slots, func(e fileEntry) bool { return e.id == 0 })
	if slot < 0 {
		panic("workload: no free directory slot after eviction")
	}
	entry := fileEntry{id: u.nextID, start: start, blocks: blocks}
	u.nextID++
	entry.sizeBytes = uint32((blocks-1)*(payloadSizeBytes-fileData) + 1 + u.rng.IntN(payloadSizeBytes-fileData))
	copy(entry.name[:], fmt.Sprintf("%s/%06d.jpg", now.UTC().Format("2006/01"), entry.id))
	if u.misorderUpload {
		for part := range blocks { // the directory write takes the next sequence number
			entry.seqs[part] = u.h.nextSeq + 2 + uint64(part)
		}
		err = u.publish(now, dev, slot, entry)
	}
	if err == nil {
		err = u.writeData(now, dev, &entry)
	}
	if err == nil && !u.misorderUpload {
		err = u.publish(now, dev, slot, entry)
	}
	if err == nil {
		u.live = append(u.live, slot)
		u.head = start + uint32(blocks)
	}
	return operation, err
}

// writeData writes a file's data blocks and Syncs, recording each write's
// sequence number in the entry.
func (u *uploads) writeData(now time.Time, dev backend.Device, entry *fileEntry) error {
	for part := range entry.blocks {
		p := u.h.payload()
		binary.LittleEndian.PutUint64(p[fileID:], entry.id)
		binary.LittleEndian.PutUint16(p[filePart:], uint16(part))
		binary.LittleEndian.PutUint16(p[fileParts:], uint16(entry.blocks))
		u.h.fill(p[fileData:])
		index, err := u.h.write(dev, now, u.dataBlock(entry.start, part), KindFileData)
		if entry.seqs[part] != 0 && entry.seqs[part] != u.h.writes[index].seq {
			panic(fmt.Sprintf("workload: file %d part %d: predicted write #%d, issued #%d", entry.id, part, entry.seqs[part], u.h.writes[index].seq))
		}
		entry.seqs[part] = u.h.writes[index].seq
		if err != nil {
			return err
		}
	}
	return u.h.sync(dev)
}

// publish puts an entry in its slot, writes that directory block, and Syncs.
func (u *uploads) publish(now time.Time, dev backend.Device, slot int, entry fileEntry) error {
	u.slots[slot] = entry
	if err := u.writeDirectory(now, dev, slot/uploadSlotsPerBlock); err != nil {
		return err
	}
	return u.h.sync(dev)
}

// evict removes live files whose extent overlaps [start, start+blocks), and
// the oldest while the directory is full: their directory blocks are written
// and Synced before any of their data blocks is reused.
func (u *uploads) evict(now time.Time, dev backend.Device, start uint32, blocks int) (int, error) {
	var dirty []int // directory blocks to rewrite
	evicted := 0
	for i := 0; i < len(u.live); {
		e := u.slots[u.live[i]]
		full := len(u.live) >= len(u.slots) && i == 0
		overlaps := int(e.start) < int(start)+blocks && int(start) < int(e.start)+e.blocks
		if !full && !overlaps {
			i++
			continue
		}
		slot := u.live[i]
		u.slots[slot] = fileEntry{}
		u.live = slices.Delete(u.live, i, i+1)
		dirty = append(dirty, slot/uploadSlotsPerBlock)
		evicted++
	}
	if evicted == 0 {
		return 0, nil
	}
	slices.Sort(dirty)
	for _, block := range slices.Compact(dirty) {
		if err := u.writeDirectory(now, dev, block); err != nil {
			return evicted, err
		}
	}
	return evicted, u.h.sync(dev)
}

// writeDirectory writes one directory block from the slots.
func (u *uploads) writeDirectory(now time.Time, dev backend.Device, block int) error {
	p := u.h.payload()
	binary.LittleEndian.PutUint32(p[0:], uint32(block))
	for i := range uploadSlotsPerBlock {
		encodeEntry(p[uploadDirHeader+i*uploadEntrySize:], u.slots[block*uploadSlotsPerBlock+i])
	}
	_, err := u.h.write(dev, now, uint64(block), KindDirectory)
	return err
}

func encodeEntry(dst []byte, e fileEntry) {
	if e.id == 0 {
		return // a free slot stays zero
	}
	binary.LittleEndian.PutUint64(dst[entryID:], e.id)
	binary.LittleEndian.PutUint32(dst[entryStart:], e.start)
	binary.LittleEndian.PutUint16(dst[entryCount:], uint16(e.blocks))
	binary.LittleEndian.PutUint32(dst[entrySize:], e.sizeBytes)
	copy(dst[entryName:entryName+uploadNameSizeBytes], e.name[:])
	for i := range e.blocks {
		binary.LittleEndian.PutUint64(dst[entrySeqs+8*i:], e.seqs[i])
	}
}

func decodeEntry(src []byte) fileEntry {
	e := fileEntry{
		id:        binary.LittleEndian.Uint64(src[entryID:]),
		start:     binary.LittleEndian.Uint32(src[entryStart:]),
		blocks:    int(binary.LittleEndian.Uint16(src[entryCount:])),
		sizeBytes: binary.LittleEndian.Uint32(src[entrySize:]),
	}
	copy(e.name[:], src[entryName:entryName+uploadNameSizeBytes])
	for i := range min(e.blocks, maxFileBlocks) {
		e.seqs[i] = binary.LittleEndian.Uint64(src[entrySeqs+8*i:])
	}
	return e
}
