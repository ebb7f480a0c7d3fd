package zfs

import (
	"bytes"
	"fmt"
	"io"
	"sort"

	"github.com/baton-dr/baton/storage/backend"
)

// device is an open zvol. Writes go to the volume's cache, shared by every
// device of the volume as the page cache is shared by every open of a block
// device; Sync moves them into the block tree.
type device struct {
	pool       *Pool
	volume     *volume
	generation uint64 // the pool's crash generation when opened
	closed     bool
}

var _ backend.Device = (*device)(nil)

// Open opens a volume for block I/O. A read-only volume opens too; its device
// refuses writes.
func (p *Pool) Open(name string) (backend.Device, error) {
	if err := p.fault(OpOpen, name); err != nil {
		return nil, err
	}
	v, err := p.lookupVolume(name)
	if err != nil {
		return nil, err
	}
	v.openDevices++
	return &device{pool: p, volume: v, generation: p.generation}, nil
}

// usable refuses I/O on a closed device or one a crash took away.
func (d *device) usable(op Op) error {
	if d.closed || d.generation != d.pool.generation {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: file already closed", d.pool.devicePath(d.volume.name))
	}
	return d.pool.fault(op, d.volume.name)
}

// ReadAt reads the volume as a consumer sees it: unsynced writes over the
// synced tree over zeros. Reading past the end returns io.EOF.
func (d *device) ReadAt(buf []byte, offset int64) (int, error) {
	if err := d.usable(OpRead); err != nil {
		return 0, err
	}
	v := d.volume
	if offset < 0 {
		return 0, backend.Refusal(backend.ErrInvalid, tool, "%s: Invalid argument", d.pool.devicePath(v.name))
	}
	return readBlocks(buf, offset, v.sizeBytes, v.blockSizeBytes, v.current)
}

// readBlocks reads size bytes of blocks of blockSize from offset into buf,
// as find gives them (nil: a hole, read as zeros). Reading past the end
// returns io.EOF. The volume's device and a snapshot's view read so.
func readBlocks(buf []byte, offset int64, size, blockSize uint64, find func(index uint64) *block) (int, error) {
	if uint64(offset) >= size {
		return 0, io.EOF
	}
	n := len(buf)
	if rest := size - uint64(offset); uint64(n) > rest {
		n = int(rest)
	}
	for done := 0; done < n; {
		at := uint64(offset) + uint64(done)
		index, within := at/blockSize, at%blockSize
		chunk := min(uint64(n-done), blockSize-within)
		out := buf[done : done+int(chunk)]
		if b := find(index); b != nil {
			copy(out, b.data[within:])
		} else {
			clear(out)
		}
		done += int(chunk)
	}
	if n < len(buf) {
		return n, io.EOF
	}
	return n, nil
}

// current is the block a read sees at an index: the cached one, else the
// synced one, else nil for zeros.
func (v *volume) current(index uint64) *block {
	if b, ok := v.pending[index]; ok {
		return b
	}
	return lookup(v.head, index)
}

// WriteAt writes into the volume's cache, whole or not at all: a write past
// the end, to a read-only volume, or beyond the pool's free space is refused.
func (d *device) WriteAt(data []byte, offset int64) (int, error) {
	if err := d.usable(OpWrite); err != nil {
		return 0, err
	}
	// The path is built only for a refusal: every block of I/O comes here.
	p, v := d.pool, d.volume
	if v.readOnly {
		return 0, backend.Refusal(backend.ErrRefused, tool, "cannot write '%s': Read-only file system", p.devicePath(v.name))
	}
	if offset < 0 || uint64(offset) > v.sizeBytes || uint64(len(data)) > v.sizeBytes-uint64(offset) {
		return 0, backend.Refusal(backend.ErrInvalid, tool, "cannot write '%s': No space left on device", p.devicePath(v.name))
	}
	if len(data) == 0 || v.holeStays(data, uint64(offset)) {
		return len(data), nil
	}
	first := uint64(offset) / v.blockSizeBytes
	last := (uint64(offset) + uint64(len(data)) - 1) / v.blockSizeBytes
	var extra uint64
	for index := first; index <= last; index++ {
		if _, cached := v.pending[index]; !cached && !exclusive(v.head, index) {
			extra += v.blockSizeBytes
		}
	}
	next := v.charge()
	next.pendingExtraBytes += extra
	if !p.fits(0, v, next) {
		return 0, backend.Refusal(backend.ErrPoolFull, tool, "cannot write '%s': No space left on device", p.devicePath(v.name))
	}
	for index := first; index <= last; index++ {
		v.writeBlock(index, data, uint64(offset))
	}
	v.pendingExtraBytes += extra
	return len(data), nil
}

// zeros is compared against, never written.
var zeros = make([]byte, 64<<10)

// holeStays reports whether a write of zeros lands only on blocks that hold
// no data: the pool runs with compression, which stores an all-zero block as a
// hole, so such a write changes nothing and allocates nothing (a DRBD full
// sync of a thin volume copies its unwritten blocks this way).
func (v *volume) holeStays(data []byte, offset uint64) bool {
	for rest := data; len(rest) > 0; {
		n := min(len(rest), len(zeros))
		if !bytes.Equal(rest[:n], zeros[:n]) {
			return false
		}
		rest = rest[n:]
	}
	first := offset / v.blockSizeBytes
	last := (offset + uint64(len(data)) - 1) / v.blockSizeBytes
	for index := first; index <= last; index++ {
		if v.current(index) != nil {
			return false
		}
	}
	return true
}

// writeBlock copies the part of a write that falls in one block into the
// block's cached copy. A partial write reads the rest of the block first
// (read-modify-write); a write that covers the whole block takes its bytes
// without the read, since every old byte is overwritten anyway.
func (v *volume) writeBlock(index uint64, data []byte, offset uint64) {
	start := index * v.blockSizeBytes
	from := max(start, offset)
	to := min(start+v.blockSizeBytes, offset+uint64(len(data)))
	if from < start || to > start+v.blockSizeBytes || from >= to {
		panic(fmt.Sprintf("zfs: write [%d,%d) outside block %d", from, to, index))
	}
	whole := from == start && to == start+v.blockSizeBytes
	b, cached := v.pending[index]
	if !cached {
		b = &block{data: make([]byte, v.blockSizeBytes)}
		if !whole {
			if old := lookup(v.head, index); old != nil {
				copy(b.data, old.data)
			}
		}
		v.pending[index] = b
	}
	n := copy(b.data[from-start:to-start], data[from-offset:to-offset])
	if whole && uint64(n) != v.blockSizeBytes {
		panic(fmt.Sprintf("zfs: whole-block write copied %d of %d bytes", n, v.blockSizeBytes))
	}
}

// Sync makes the volume's cached writes durable.
func (d *device) Sync() error {
	if err := d.usable(OpSync); err != nil {
		return err
	}
	d.pool.flush(d.volume)
	return nil
}

// Close closes the device; the volume's last close flushes its cache.
func (d *device) Close() error {
	if d.closed || d.generation != d.pool.generation {
		return backend.Refusal(backend.ErrInvalid, tool, "%s: file already closed", d.pool.devicePath(d.volume.name))
	}
	v := d.volume
	if v.openDevices == 1 {
		if err := d.pool.fault(OpSync, v.name); err != nil {
			return err
		}
		d.pool.flush(v)
	}
	d.closed = true
	v.openDevices--
	return nil
}

// flush moves the cache into the block tree in index order. The cache's space
// was charged when it was written, so the allocation must not move.
func (p *Pool) flush(v *volume) {
	if len(v.pending) == 0 {
		return
	}
	before := p.allocatedBytes()
	indexes := make([]uint64, 0, len(v.pending))
	for index := range v.pending {
		indexes = append(indexes, index)
	}
	sort.Slice(indexes, func(i, j int) bool { return indexes[i] < indexes[j] })
	for _, index := range indexes {
		if !p.setBlock(&v.head, index, v.pending[index]) {
			v.uniqueBytes += v.blockSizeBytes
		}
	}
	v.pending = map[uint64]*block{}
	v.pendingExtraBytes = 0
	v.modifiedTxg = p.nextTxg()
	if after := p.allocatedBytes(); after != before {
		panic("zfs: flushing the cache moved the allocation")
	}
}

// Crash simulates the node's crash: unsynced writes are lost and every open
// device goes with the processes that held it. Synced state is untouched.
func (p *Pool) Crash() {
	p.generation++
	for _, v := range p.sortedVolumes() {
		v.pending = map[uint64]*block{}
		v.pendingExtraBytes = 0
		v.openDevices = 0
	}
}
