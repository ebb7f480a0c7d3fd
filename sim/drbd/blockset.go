package drbd

import "math/bits"

// blockBytes is DRBD's bitmap granularity: one bit covers 4 KiB of the device,
// so out-of-sync accounting and resync both move whole 4 KiB blocks.
const blockBytes = 4096

// blockSet is a growable bitmap of block numbers, DRBD's out-of-sync bitmap.
// Iteration runs in block order, so everything derived from it is deterministic.
type blockSet struct {
	words []uint64
	count uint64
}

func (s *blockSet) set(block uint64) {
	word := block / 64
	for uint64(len(s.words)) <= word {
		s.words = append(s.words, 0)
	}
	mask := uint64(1) << (block % 64)
	if s.words[word]&mask == 0 {
		s.words[word] |= mask
		s.count++
	}
}

func (s *blockSet) clear(block uint64) {
	word := block / 64
	if word >= uint64(len(s.words)) {
		return
	}
	mask := uint64(1) << (block % 64)
	if s.words[word]&mask != 0 {
		s.words[word] &^= mask
		s.count--
	}
}

func (s *blockSet) has(block uint64) bool {
	word := block / 64
	return word < uint64(len(s.words)) && s.words[word]&(uint64(1)<<(block%64)) != 0
}

// setRange marks blocks [first, first+n).
func (s *blockSet) setRange(first, n uint64) {
	for block := first; block < first+n; block++ {
		s.set(block)
	}
}

// union adds every block of other.
func (s *blockSet) union(other *blockSet) {
	for word := range other.words {
		for uint64(len(s.words)) <= uint64(word) {
			s.words = append(s.words, 0)
		}
		added := other.words[word] &^ s.words[word]
		s.words[word] |= added
		s.count += uint64(bits.OnesCount64(added))
	}
}

func (s *blockSet) reset() {
	s.words = s.words[:0]
	s.count = 0
}

// next returns the lowest block >= from in the set.
func (s *blockSet) next(from uint64) (uint64, bool) {
	for word := from / 64; word < uint64(len(s.words)); word++ {
		w := s.words[word]
		if word == from/64 {
			w &^= (uint64(1) << (from % 64)) - 1
		}
		if w != 0 {
			return word*64 + uint64(bits.TrailingZeros64(w)), true
		}
	}
	return 0, false
}

func (s *blockSet) bytes() uint64 { return s.count * blockBytes }

func (s *blockSet) clone() *blockSet {
	return &blockSet{words: append([]uint64(nil), s.words...), count: s.count}
}

// blockSpan is the range of blocks a byte range touches.
func blockSpan(offset int64, length int) (first, n uint64) {
	if length <= 0 {
		return uint64(offset) / blockBytes, 0
	}
	first = uint64(offset) / blockBytes
	last := (uint64(offset) + uint64(length) - 1) / blockBytes
	return first, last - first + 1
}

// coveredSpan is the range of blocks a byte range overwrites completely: only
// those stop being out of sync when a write reaches both sides.
func coveredSpan(offset int64, length int) (first, n uint64) {
	start := (uint64(offset) + blockBytes - 1) / blockBytes
	end := (uint64(offset) + uint64(length)) / blockBytes
	if end <= start {
		return start, 0
	}
	return start, end - start
}

// blockSetOf is a peer's set in sets, made empty the first time it is asked
// for.
func blockSetOf(sets map[string]*blockSet, peer string) *blockSet {
	b, ok := sets[peer]
	if !ok {
		b = &blockSet{}
		sets[peer] = b
	}
	return b
}
