package drbd

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// This file holds the test doubles of the simulation kernel (an event queue),
// the network (a partition set) and the ZFS pool (in-memory volumes). The
// real ones live in sim, sim/network and sim/zfs.

// testScheduler is a minimal event queue on a simulated clock.
type testScheduler struct {
	now   time.Time
	seq   uint64
	queue []testEvent
	log   []string
}

type testEvent struct {
	at    time.Time
	seq   uint64
	label string
	f     func()
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newTestScheduler() *testScheduler { return &testScheduler{now: epoch} }

func (s *testScheduler) Now() time.Time { return s.now }

func (s *testScheduler) After(d time.Duration, label string, f func()) {
	s.seq++
	e := testEvent{at: s.now.Add(d), seq: s.seq, label: label, f: f}
	i, _ := slices.BinarySearchFunc(s.queue, e, func(a, b testEvent) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return int(a.seq) - int(b.seq)
	})
	s.queue = slices.Insert(s.queue, i, e)
}

func (s *testScheduler) Logf(kind, format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf("%9.3fs %s: %s", s.now.Sub(epoch).Seconds(), kind, fmt.Sprintf(format, args...)))
}

// step runs the earliest event; false when none is queued.
func (s *testScheduler) step() bool {
	if len(s.queue) == 0 {
		return false
	}
	e := s.queue[0]
	s.queue = s.queue[1:]
	s.now = e.at
	e.f()
	return true
}

// runFor runs every event due within d and leaves the clock d later.
func (s *testScheduler) runFor(d time.Duration) {
	until := s.now.Add(d)
	for len(s.queue) > 0 && !s.queue[0].at.After(until) {
		s.step()
	}
	s.now = until
}

// testLinks is a network of full reachability minus the cut pairs.
type testLinks struct{ cut map[[2]string]bool }

func newTestLinks() *testLinks { return &testLinks{cut: map[[2]string]bool{}} }

func (l *testLinks) Reachable(from, to string) bool { return !l.cut[[2]string{from, to}] }

func (l *testLinks) partition(a, b string) {
	l.cut[[2]string{a, b}], l.cut[[2]string{b, a}] = true, true
}

func (l *testLinks) heal(a, b string) {
	delete(l.cut, [2]string{a, b})
	delete(l.cut, [2]string{b, a})
}

// memVolume is an in-memory volume that keeps synced and unsynced blocks
// apart, so that a crash can lose what was not synced.
type memVolume struct {
	sizeBytes uint64
	durable   map[uint64][]byte // by 4 KiB block
	pending   map[uint64][]byte
	syncs     int
	// full refuses every write, as a zvol on a pool at 100% refuses one that
	// needs a new block.
	full bool
}

func newMemVolume(sizeBytes uint64) *memVolume {
	return &memVolume{sizeBytes: sizeBytes, durable: map[uint64][]byte{}, pending: map[uint64][]byte{}}
}

func (v *memVolume) block(i uint64) []byte {
	if b, ok := v.pending[i]; ok {
		return b
	}
	if b, ok := v.durable[i]; ok {
		return b
	}
	return nil
}

func (v *memVolume) readAt(p []byte, offset int64) (int, error) {
	if offset < 0 || uint64(offset) >= v.sizeBytes {
		return 0, io.EOF
	}
	n := int(min(uint64(len(p)), v.sizeBytes-uint64(offset)))
	for done := 0; done < n; {
		at := uint64(offset) + uint64(done)
		i, within := at/blockBytes, at%blockBytes
		chunk := int(min(uint64(n-done), blockBytes-within))
		if b := v.block(i); b != nil {
			copy(p[done:done+chunk], b[within:])
		} else {
			clear(p[done : done+chunk])
		}
		done += chunk
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (v *memVolume) writeAt(p []byte, offset int64) (int, error) {
	if v.full {
		return 0, backend.Refusal(backend.ErrPoolFull, "zfs", "cannot write: No space left on device")
	}
	if offset < 0 || uint64(offset)+uint64(len(p)) > v.sizeBytes {
		return 0, fmt.Errorf("write of %d bytes at %d beyond the end (%d)", len(p), offset, v.sizeBytes)
	}
	for done := 0; done < len(p); {
		at := uint64(offset) + uint64(done)
		i, within := at/blockBytes, at%blockBytes
		chunk := int(min(uint64(len(p)-done), blockBytes-within))
		b, ok := v.pending[i]
		if !ok {
			b = make([]byte, blockBytes)
			copy(b, v.durable[i])
			v.pending[i] = b
		}
		copy(b[within:], p[done:done+chunk])
		done += chunk
	}
	return len(p), nil
}

func (v *memVolume) sync() {
	for i, b := range v.pending {
		v.durable[i] = b
	}
	clear(v.pending)
	v.syncs++
}

// crash loses the unsynced writes.
func (v *memVolume) crash() { clear(v.pending) }

// copyTo is what a snapshot, send and receive into another pool amounts to.
func (v *memVolume) copyTo(other *memVolume) {
	for i, b := range v.durable {
		other.durable[i] = slices.Clone(b)
	}
}

type memDevice struct {
	v      *memVolume
	closed bool
}

func (d *memDevice) ReadAt(p []byte, offset int64) (int, error) {
	if d.closed {
		return 0, fmt.Errorf("read on a closed device")
	}
	return d.v.readAt(p, offset)
}

func (d *memDevice) WriteAt(p []byte, offset int64) (int, error) {
	if d.closed {
		return 0, fmt.Errorf("write on a closed device")
	}
	return d.v.writeAt(p, offset)
}

func (d *memDevice) Sync() error {
	if d.closed {
		return fmt.Errorf("sync on a closed device")
	}
	d.v.sync()
	return nil
}

func (d *memDevice) Close() error {
	if d.closed {
		return fmt.Errorf("close of a closed device")
	}
	d.closed = true
	return nil
}

// memPool is one node's volumes.
type memPool struct{ volumes map[string]*memVolume }

func newMemPool() *memPool { return &memPool{volumes: map[string]*memVolume{}} }

func (p *memPool) create(name string, sizeBytes uint64) error {
	if _, ok := p.volumes[name]; ok {
		return backend.Refusal(backend.ErrExists, "zfs", "cannot create '%s': dataset already exists", name)
	}
	p.volumes[name] = newMemVolume(sizeBytes)
	return nil
}

func (p *memPool) open(name string) (backend.Device, error) {
	v, ok := p.volumes[name]
	if !ok {
		return nil, backend.Refusal(backend.ErrNotFound, "zfs", "cannot open '%s': dataset does not exist", name)
	}
	return &memDevice{v: v}, nil
}

func (p *memPool) crash() {
	for _, name := range slices.Sorted(maps.Keys(p.volumes)) {
		p.volumes[name].crash()
	}
}
