package workload

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// observation is what one block holds, as a constraint on the prefix: the
// device is after the first cut writes of the history only if lo <= cut <= hi.
type observation struct {
	block  uint64
	found  int // index of the write the block holds; -1 for zeros
	lo, hi int
}

// consistency is the outcome of the crash-consistency check of one volume.
type consistency struct {
	cut    int // the prefix: the current-history writes before index cut
	prefix Prefix
	lost   LostWrites
}

// readBlock reads one whole block.
func readBlock(dev backend.Device, block uint64, buf []byte) error {
	n, err := dev.ReadAt(buf, int64(block)*BlockSizeBytes)
	if n == len(buf) {
		return nil // io.ReaderAt may report io.EOF with a full read at the end
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// checkPrefix reads every block the history touched and finds the prefix of
// the history the device holds. Each block constrains the prefix to an
// interval of cuts; a consistent device's intervals share a cut. Otherwise the
// cut the most blocks agree on is taken, and the blocks that disagree are the
// violations: that names the one block from the future, not every block it
// makes look stale. O(writes + blocks·log blocks).
func (h *history) checkPrefix(dev backend.Device, now time.Time, r *reporter) consistency {
	blocks := h.blocks()
	observations := make([]observation, 0, len(blocks))
	for _, block := range blocks {
		if o, ok := h.observe(dev, block, r); ok {
			observations = append(observations, o)
		}
	}
	cut := stab(observations)
	if cut > len(h.writes) {
		panic(fmt.Sprintf("workload: volume %s: cut %d beyond %d writes", h.volumeName, cut, len(h.writes)))
	}
	prefix := h.prefixAt(cut)
	for _, o := range observations {
		if cut < o.lo || cut > o.hi {
			h.reportTorn(o, cut, prefix, r)
		}
	}
	return consistency{cut: cut, prefix: prefix, lost: h.lostAfter(cut, now)}
}

// observe reads one block and turns it into a constraint, or reports why it
// cannot be one.
func (h *history) observe(dev backend.Device, block uint64, r *reporter) (observation, bool) {
	expected := "a block of this volume's history"
	if err := readBlock(dev, block, h.read); err != nil {
		r.add(Unreadable, block, expected, err.Error())
		return observation{}, false
	}
	hdr, state := decodeBlock(h.read)
	switch state {
	case blockZero:
		return observation{block: block, found: -1, lo: 0, hi: h.first(block)}, true
	case blockGarbage:
		r.add(Foreign, block, expected, "non-zero bytes without a workload header")
		return observation{}, false
	case blockChecksum:
		r.add(Checksum, block, fmt.Sprintf("bytes matching the header's checksum %#08x", hdr.checksum),
			fmt.Sprintf("a block claiming to be write #%d whose bytes do not match it", hdr.seq))
		return observation{}, false
	}
	if hdr.workload != h.workload || hdr.volume != h.volume {
		r.add(Foreign, block, expected, fmt.Sprintf("a block of workload %s volume %s", fieldName(hdr.workload), fieldName(hdr.volume)))
		return observation{}, false
	}
	if hdr.block != block {
		r.add(Foreign, block, expected, fmt.Sprintf("write #%d aimed at block %d (misdirected)", hdr.seq, hdr.block))
		return observation{}, false
	}
	k, ok := h.index(hdr.seq)
	switch {
	case !ok:
		r.add(UnknownWrite, block, expected, fmt.Sprintf("write #%d, which this volume never issued", hdr.seq))
	case h.writes[k].block != block || h.writes[k].checksum != hdr.checksum:
		r.add(UnknownWrite, block, h.describe(k), fmt.Sprintf("write #%d with other content (checksum %#08x)", hdr.seq, hdr.checksum))
	case h.writes[k].discarded != 0:
		r.add(UnknownWrite, block, "a write of the current history",
			fmt.Sprintf("%s, discarded by resume %d (lost in a fail-over or a diverged tail)", h.describe(k), h.writes[k].discarded))
	default:
		return observation{block: block, found: k, lo: k + 1, hi: h.successor(k)}, true
	}
	return observation{}, false
}

// reportTorn explains why a block does not fit the chosen prefix.
func (h *history) reportTorn(o observation, cut int, prefix Prefix, r *reporter) {
	expected := h.describe(h.lastBefore(o.block, cut))
	relation := "later"
	if cut > o.hi {
		relation = "older"
	}
	r.add(Torn, o.block, expected, fmt.Sprintf("%s, %s than the prefix the other blocks hold (through write #%d)",
		h.describe(o.found), relation, prefix.Seq))
}

// count is the number of current-history writes before a cut.
func (h *history) count(cut int) int {
	n := 0
	for _, w := range h.writes[:cut] {
		if w.discarded == 0 {
			n++
		}
	}
	return n
}

// stab returns the smallest cut inside the most intervals: for a consistent
// device, the smallest cut inside all of them, right after the last write any
// block holds.
func stab(observations []observation) int {
	type event struct{ at, delta int }
	events := make([]event, 0, 2*len(observations))
	for _, o := range observations {
		if o.lo > o.hi {
			panic(fmt.Sprintf("workload: block %d constrains the prefix to the empty interval [%d, %d]", o.block, o.lo, o.hi))
		}
		events = append(events, event{o.lo, +1}, event{o.hi + 1, -1})
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	best, bestCut, covered := 0, 0, 0
	for i := 0; i < len(events); {
		at := events[i].at
		for ; i < len(events) && events[i].at == at; i++ {
			covered += events[i].delta
		}
		if covered > best {
			best, bestCut = covered, at
		}
	}
	return bestCut
}

// prefixAt describes the prefix that ends before a cut.
func (h *history) prefixAt(cut int) Prefix {
	p := Prefix{Writes: h.count(cut)}
	for i := cut - 1; i >= 0; i-- {
		if h.writes[i].discarded == 0 {
			p.Seq = h.writes[i].seq
			p.At = time.Unix(0, h.writes[i].atNanos).UTC()
			break
		}
	}
	return p
}

// lostAfter counts the current-history writes from a cut on.
func (h *history) lostAfter(cut int, now time.Time) LostWrites {
	var lost LostWrites
	oldest := int64(0)
	for _, w := range h.writes[cut:] {
		switch {
		case w.discarded != 0:
		case !w.acked:
			lost.Unacknowledged++
		default:
			if lost.Acknowledged == 0 || w.atNanos < oldest {
				oldest = w.atNanos
			}
			lost.Acknowledged++
			lost.AcknowledgedBytes += BlockSizeBytes
		}
	}
	if lost.Acknowledged > 0 {
		lost.Oldest = time.Unix(0, oldest).UTC()
		lost.Age = now.Sub(lost.Oldest)
	}
	return lost
}
