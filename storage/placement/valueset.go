package placement

import "math/bits"

// valueSet counts the users of each value in [0, limit) and finds the lowest
// value nobody uses inside a range. A bit per value says "used"; a summary bit
// per 64-value word says "word full", so a search skips 4096 used values per
// summary word it reads: allocating the n-th value costs about n/4096 word
// reads, never a scan over every allocation.
type valueSet struct {
	used  []uint64          // bit v%64 of used[v/64]: v has at least one user
	full  []uint64          // bit w%64 of full[w/64]: used[w] is all ones
	users map[uint32]uint32 // users of each used value (adoption may share one across disjoint nodes)
}

func newValueSet(limit uint32) valueSet {
	assertf(limit > 0 && limit%4096 == 0, "valueSet limit %d is not a positive multiple of 4096", limit)
	return valueSet{
		used:  make([]uint64, limit/64),
		full:  make([]uint64, limit/4096),
		users: map[uint32]uint32{},
	}
}

func (s *valueSet) add(v uint32) {
	assertf(int(v/64) < len(s.used), "value %d beyond the set", v)
	s.users[v]++
	word := v / 64
	s.used[word] |= 1 << (v % 64)
	if s.used[word] == ^uint64(0) {
		s.full[word/64] |= 1 << (word % 64)
	}
}

func (s *valueSet) remove(v uint32) {
	count := s.users[v]
	assertf(count > 0, "removing value %d that has no user", v)
	if count > 1 {
		s.users[v] = count - 1
		return
	}
	delete(s.users, v)
	word := v / 64
	s.used[word] &^= 1 << (v % 64)
	s.full[word/64] &^= 1 << (word % 64)
}

func (s *valueSet) has(v uint32) bool {
	return s.users[v] > 0
}

// lowestFree returns the lowest unused value in [first, last].
func (s *valueSet) lowestFree(first, last uint32) (uint32, bool) {
	if first > last || int(first/64) >= len(s.used) {
		return 0, false
	}
	last = min(last, uint32(len(s.used))*64-1)
	word := first / 64
	taken := s.used[word] | (uint64(1)<<(first%64) - 1) // values below first count as used
	for taken == ^uint64(0) {
		next, ok := s.nextNotFullWord(word + 1)
		if !ok {
			return 0, false
		}
		word, taken = next, s.used[next]
	}
	free := word*64 + uint32(bits.TrailingZeros64(^taken))
	if free > last {
		return 0, false
	}
	assertf(!s.has(free) && free >= first, "lowestFree(%d, %d) chose %d, which is used or below the range", first, last, free)
	return free, true
}

// nextNotFullWord returns the first word at or after from that has a free bit.
// The loop is bounded by the summary's length.
func (s *valueSet) nextNotFullWord(from uint32) (uint32, bool) {
	summary := from / 64
	if int(summary) >= len(s.full) {
		return 0, false
	}
	fullWords := s.full[summary] | (uint64(1)<<(from%64) - 1)
	for fullWords == ^uint64(0) {
		summary++
		if int(summary) >= len(s.full) {
			return 0, false
		}
		fullWords = s.full[summary]
	}
	return summary*64 + uint32(bits.TrailingZeros64(^fullWords)), true
}
