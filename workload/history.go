package workload

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// write is one block write the model issued: the unit of a volume's history.
// It is kept small (40 bytes) because a scenario issues thousands.
type write struct {
	seq      uint64
	atNanos  int64 // the Step's time: when it was issued and, if acked, acknowledged
	block    uint64
	checksum uint32 // the header checksum, which identifies the content written
	prev     int32  // index of the previous current-history write to this block; -1 if none
	// discarded is 0 while the write is in the current history, n once the n-th
	// Resume cut it off (lost in a fail-over, or left on a diverged tail).
	discarded uint16
	kind      BlockKind
	acked     bool
}

// history is one volume's record of every write its model issued, with the
// per-block chains that let verification run in O(writes).
type history struct {
	workload   [nameSizeBytes]byte
	volume     [nameSizeBytes]byte
	volumeName string
	sizeBlocks uint64
	rng        *rand.Rand

	writes []write
	// last maps every block any write touched to the index of its last write
	// in the current history, or -1 when only discarded writes touched it.
	last         map[uint64]int32
	synced       int // writes[:synced] were issued before the last successful Sync
	syncs        int // Syncs that returned without error
	nextSeq      uint64
	resumes      uint16
	bytesWritten uint64 // every write ever issued, across branches

	buf  []byte // the block being built
	read []byte // the block being verified
}

func newHistory(workload, volume string, sizeBlocks uint64, rng *rand.Rand) *history {
	if sizeBlocks == 0 || rng == nil {
		panic(fmt.Sprintf("workload: volume %q needs blocks and a random source", volume))
	}
	return &history{
		workload:   nameField(workload),
		volume:     nameField(volume),
		volumeName: volume,
		sizeBlocks: sizeBlocks,
		rng:        rng,
		last:       map[uint64]int32{},
		buf:        make([]byte, BlockSizeBytes),
		read:       make([]byte, BlockSizeBytes),
	}
}

// payload returns the payload of the block being built, zeroed.
func (h *history) payload() []byte {
	p := h.buf[headerSizeBytes:]
	clear(p)
	return p
}

// fill fills the rest of a payload with the application's data.
func (h *history) fill(rest []byte) { fillRandom(rest, h.rng.Uint64()) }

// write seals the block built in payload() and writes it to a block address.
// The write is recorded before it is issued: a write that fails may still land,
// and must then be recognised. It returns the write's index in the history.
func (h *history) write(dev backend.Device, now time.Time, block uint64, kind BlockKind) (int, error) {
	if block >= h.sizeBlocks {
		panic(fmt.Sprintf("workload: volume %s: block %d beyond its %d blocks", h.volumeName, block, h.sizeBlocks))
	}
	if len(h.writes) >= math.MaxInt32 {
		panic("workload: history exceeds 2^31 writes")
	}
	h.nextSeq++
	sum := sealBlock(h.buf, header{kind: kind, seq: h.nextSeq, block: block, workload: h.workload, volume: h.volume})
	prev, ok := h.last[block]
	if !ok {
		prev = -1
	}
	index := len(h.writes)
	h.writes = append(h.writes, write{
		seq: h.nextSeq, atNanos: now.UnixNano(), block: block, checksum: sum, prev: prev, kind: kind,
	})
	h.last[block] = int32(index)
	h.bytesWritten += BlockSizeBytes
	n, err := dev.WriteAt(h.buf, int64(block)*BlockSizeBytes)
	if err == nil && n != BlockSizeBytes {
		err = io.ErrShortWrite
	}
	if err != nil {
		return index, fmt.Errorf("failed to write block %d of volume %s: %w", block, h.volumeName, err)
	}
	return index, nil
}

// sync issues a barrier; when it returns without error every write issued
// before it is acknowledged.
func (h *history) sync(dev backend.Device) error {
	if err := dev.Sync(); err != nil {
		return fmt.Errorf("failed to sync volume %s: %w", h.volumeName, err)
	}
	for i := h.synced; i < len(h.writes); i++ {
		if h.writes[i].discarded != 0 {
			panic(fmt.Sprintf("workload: volume %s: discarded write #%d after the sync point", h.volumeName, h.writes[i].seq))
		}
		h.writes[i].acked = true
	}
	h.synced = len(h.writes)
	h.syncs++
	return nil
}

// index finds a write by sequence number; sequence numbers only grow.
func (h *history) index(seq uint64) (int, bool) {
	i := sort.Search(len(h.writes), func(i int) bool { return h.writes[i].seq >= seq })
	return i, i < len(h.writes) && h.writes[i].seq == seq
}

// touched reports whether any write, current or discarded, aimed at the block.
func (h *history) touched(block uint64) bool {
	_, ok := h.last[block]
	return ok
}

// blocks lists every block the history touched, in address order.
func (h *history) blocks() []uint64 {
	blocks := make([]uint64, 0, len(h.last))
	for b := range h.last {
		blocks = append(blocks, b)
	}
	slices.Sort(blocks)
	return blocks
}

// chainBound bounds a walk down one block's chain: no chain is longer than the
// history.
func (h *history) chainBound() int { return len(h.writes) + 1 }

// successor is the index of the current-history write to k's block that
// follows write k, or len(writes) if none does.
func (h *history) successor(k int) int {
	block := h.writes[k].block
	next := len(h.writes)
	i := int(h.last[block])
	for steps := 0; i != k; steps++ {
		if i < 0 || steps > h.chainBound() {
			panic(fmt.Sprintf("workload: volume %s: write #%d is not in block %d's chain", h.volumeName, h.writes[k].seq, block))
		}
		next = i
		i = int(h.writes[i].prev)
	}
	return next
}

// first is the index of the first current-history write to a block, or
// len(writes) if none: until then the block must read as zeros.
func (h *history) first(block uint64) int {
	first := len(h.writes)
	i := int(h.last[block])
	for steps := 0; i >= 0; steps++ {
		if steps > h.chainBound() {
			panic(fmt.Sprintf("workload: volume %s: block %d's chain does not end", h.volumeName, block))
		}
		first = i
		i = int(h.writes[i].prev)
	}
	return first
}

// lastBefore is the index of the last current-history write to a block before
// the cut, or -1 if the block must still read as zeros there.
func (h *history) lastBefore(block uint64, cut int) int {
	i := int(h.last[block])
	for steps := 0; i >= cut; steps++ {
		if steps > h.chainBound() {
			panic(fmt.Sprintf("workload: volume %s: block %d's chain does not end", h.volumeName, block))
		}
		i = int(h.writes[i].prev)
	}
	return i
}

// truncate makes the writes from cut on leave the current history for good:
// the history branches there, as a volume's does at a fail-over.
func (h *history) truncate(cut int) {
	if cut < 0 || cut > len(h.writes) {
		panic(fmt.Sprintf("workload: volume %s: cut %d outside a history of %d writes", h.volumeName, cut, len(h.writes)))
	}
	if h.resumes == math.MaxUint16 {
		panic("workload: more than 65535 resumes")
	}
	h.resumes++
	for i := cut; i < len(h.writes); i++ {
		if h.writes[i].discarded == 0 {
			h.writes[i].discarded = h.resumes
		}
	}
	h.rebuildChains()
	h.synced = len(h.writes)
}

// rebuildChains recomputes last and prev from the current history.
func (h *history) rebuildChains() {
	clear(h.last)
	for i := range h.writes {
		w := &h.writes[i]
		prev, ok := h.last[w.block]
		if !ok {
			prev = -1
		}
		if w.discarded != 0 {
			h.last[w.block] = prev
			continue
		}
		w.prev = prev
		h.last[w.block] = int32(i)
	}
}

// maxBlockBefore is the highest block a current-history write aimed at within
// [from, to), or -1 if none did.
func (h *history) maxBlockBefore(from, to uint64) int64 {
	highest := int64(-1)
	for block, last := range h.last {
		if last >= 0 && block >= from && block < to && int64(block) > highest {
			highest = int64(block)
		}
	}
	return highest
}

// changes counts the current-history writes after the one with sequence
// number afterSeq.
func (h *history) changes(afterSeq uint64) ChangeStats {
	start := sort.Search(len(h.writes), func(i int) bool { return h.writes[i].seq > afterSeq })
	return currentChanges(h.writes[start:])
}

// changesBetween counts the current history's writes issued in (after,
// until], in nanoseconds: writes are in time order, as steps never go back.
func (h *history) changesBetween(afterNanos, untilNanos int64) ChangeStats {
	start := sort.Search(len(h.writes), func(i int) bool { return h.writes[i].atNanos > afterNanos })
	end := sort.Search(len(h.writes), func(i int) bool { return h.writes[i].atNanos > untilNanos })
	return currentChanges(h.writes[start:max(start, end)])
}

// currentChanges counts the writes of the current history (not discarded)
// and the distinct blocks they wrote.
func currentChanges(writes []write) ChangeStats {
	var stats ChangeStats
	distinct := map[uint64]struct{}{}
	for _, w := range writes {
		if w.discarded != 0 {
			continue
		}
		stats.Writes++
		distinct[w.block] = struct{}{}
	}
	stats.Blocks = len(distinct)
	stats.WriteBytes = uint64(stats.Writes) * BlockSizeBytes
	stats.BlockBytes = uint64(stats.Blocks) * BlockSizeBytes
	return stats
}

// describe names a write for a violation message.
func (h *history) describe(i int) string {
	if i < 0 {
		return "zeros (never written)"
	}
	w := h.writes[i]
	state := "unacknowledged"
	if w.acked {
		state = "acknowledged"
	}
	return fmt.Sprintf("write #%d (%s, %s, at %s)", w.seq, w.kind, state, formatTime(w.atNanos))
}

func formatTime(nanos int64) string {
	return time.Unix(0, nanos).UTC().Format(time.RFC3339Nano)
}

// readApp reads a block as the application would: it returns the payload of a
// well-formed block of this volume of the given kind (aliasing a buffer the next
// read reuses), nil and "" for zeros, or nil and what the block holds instead.
// Blocks the history never touched read as zeros without a read: verification
// costs O(blocks written), and the crash-consistency check owns those blocks.
func (h *history) readApp(dev backend.Device, block uint64, kind BlockKind) (header, []byte, string) {
	if !h.touched(block) {
		return header{}, nil, ""
	}
	if err := readBlock(dev, block, h.read); err != nil {
		return header{}, nil, "an unreadable block: " + err.Error()
	}
	hdr, state := decodeBlock(h.read)
	switch {
	case state == blockZero:
		return hdr, nil, ""
	case state != blockValid:
		return hdr, nil, "a " + state.String() + " block"
	case hdr.workload != h.workload || hdr.volume != h.volume || hdr.block != block:
		return hdr, nil, "a block of another volume or address"
	case hdr.kind != kind:
		return hdr, nil, fmt.Sprintf("write #%d, a %s block", hdr.seq, hdr.kind)
	}
	return hdr, h.read[headerSizeBytes:], ""
}
