package zfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// The model test runs seeded random operations on the pool and on a naive
// model (maps of block index to bytes, copied whole at every snapshot) and
// compares after each step: the content of heads and snapshots, the
// bookkeeping (Verify), and the allocation recomputed from block identity
// alone, independently of the reference counts.

type modelSnapshot struct {
	name   string
	blocks map[uint64][]byte
}

type modelVolume struct {
	sizeBytes uint64
	thick     bool
	synced    map[uint64][]byte
	pending   map[uint64][]byte
	snapshots []modelSnapshot
	clones    map[string]int // dependent clones by snapshot name
	origin    [2]string      // volume, snapshot
	device    backend.Device
}

type model struct {
	t       *testing.T
	rng     *rand.Rand
	pool    *Pool
	volumes map[string]*modelVolume
	names   []string // creation order, for deterministic picks
	serial  int
	// replicas is a second pool that receives the volumes' latest snapshots,
	// and shipped the snapshot each volume's replica last received.
	replicas *Pool
	shipped  map[string]string
}

const modelBlockBytes = 512

func copyBlocks(m map[uint64][]byte) map[uint64][]byte {
	out := make(map[uint64][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (m *model) pick() (string, *modelVolume) {
	for attempt := 0; attempt < 20 && len(m.names) > 0; attempt++ {
		name := m.names[m.rng.IntN(len(m.names))]
		if v, ok := m.volumes[name]; ok {
			return name, v
		}
	}
	return "", nil
}

// modelSteps are the operations on a picked volume, each with its weight in
// a draw out of 100 (creation takes the first 5), tried in this order.
var modelSteps = []struct {
	weight int
	run    func(m *model, name string, v *modelVolume) string
}{
	{40, (*model).write},
	{10, (*model).sync},
	{10, (*model).snapshot},
	{7, (*model).clone},
	{6, (*model).rollback},
	{6, (*model).destroySnapshot},
	{4, (*model).destroy},
	{4, (*model).resize},
	{1, (*model).replicate},
	{2, (*model).crash},
	{5, (*model).closeDevice},
}

// modelCreateWeight is creation's share of the draw; it is also the step
// when there is no volume to pick.
const modelCreateWeight = 5

func (m *model) step() string {
	name, v := m.pick()
	op := m.rng.IntN(100)
	if v == nil || op < modelCreateWeight {
		return m.create()
	}
	below := modelCreateWeight
	for _, s := range modelSteps {
		below += s.weight
		if op < below {
			return s.run(m, name, v)
		}
	}
	panic(fmt.Sprintf("the model's step weights add up to %d, not 100", below))
}

// crash crashes the pool: what no volume synced is lost, and every open
// device with it.
func (m *model) crash(string, *modelVolume) string {
	m.pool.Crash()
	for _, mv := range m.volumes {
		mv.pending = map[uint64][]byte{}
		mv.device = nil
	}
	return "crash"
}

func (m *model) create() string {
	m.serial++
	name := fmt.Sprintf("v%d", m.serial)
	size := uint64(1+m.rng.IntN(64)) * modelBlockBytes * 64
	if m.rng.IntN(4) == 0 {
		size = 64 << 30 // sparse and deep
	}
	thick := m.rng.IntN(3) == 0
	provisioning := backend.Thin
	if thick {
		provisioning = backend.Thick
		size = uint64(1+m.rng.IntN(4)) * modelBlockBytes * 64
	}
	err := m.pool.CreateVolume(name, size, provisioning)
	if errors.Is(err, backend.ErrPoolFull) {
		return "create " + name + ": full"
	}
	m.must(err, "create")
	m.volumes[name] = &modelVolume{sizeBytes: size, thick: thick, synced: map[uint64][]byte{},
		pending: map[uint64][]byte{}, clones: map[string]int{}}
	m.names = append(m.names, name)
	return "create " + name
}

func (m *model) device(name string, v *modelVolume) backend.Device {
	if v.device == nil {
		dev, err := m.pool.Open(name)
		m.must(err, "open")
		v.device = dev
	}
	return v.device
}

func (m *model) current(v *modelVolume, index uint64) []byte {
	if b, ok := v.pending[index]; ok {
		return b
	}
	if b, ok := v.synced[index]; ok {
		return b
	}
	return make([]byte, modelBlockBytes)
}

func (m *model) write(name string, v *modelVolume) string {
	length := 1 + m.rng.IntN(3*modelBlockBytes)
	offset := m.rng.Uint64N(v.sizeBytes - uint64(length))
	if m.rng.IntN(2) == 0 {
		offset = m.rng.Uint64N(min(v.sizeBytes, 1<<20) - uint64(length)) // crowd the low blocks
	}
	data := make([]byte, length)
	for i := range data {
		data[i] = byte(m.rng.Uint32())
	}
	_, err := m.device(name, v).WriteAt(data, int64(offset))
	if errors.Is(err, backend.ErrPoolFull) {
		return fmt.Sprintf("write %s: full", name)
	}
	m.must(err, "write")
	for index := offset / modelBlockBytes; index <= (offset+uint64(length)-1)/modelBlockBytes; index++ {
		b := bytes.Clone(m.current(v, index))
		start := index * modelBlockBytes
		from, to := max(start, offset), min(start+modelBlockBytes, offset+uint64(length))
		copy(b[from-start:to-start], data[from-offset:to-offset])
		v.pending[index] = b
	}
	return fmt.Sprintf("write %s %d+%d", name, offset, length)
}

func (v *modelVolume) flush() {
	for index, b := range v.pending {
		v.synced[index] = b
	}
	v.pending = map[uint64][]byte{}
}

func (m *model) sync(name string, v *modelVolume) string {
	m.must(m.device(name, v).Sync(), "sync")
	v.flush()
	return "sync " + name
}

func (m *model) closeDevice(name string, v *modelVolume) string {
	if v.device == nil {
		return "close " + name + ": not open"
	}
	m.must(v.device.Close(), "close")
	v.device = nil
	v.flush()
	return "close " + name
}

func (m *model) snapshot(name string, v *modelVolume) string {
	m.serial++
	snap := fmt.Sprintf("s%d", m.serial)
	err := m.pool.Snapshot(name, snap)
	if errors.Is(err, backend.ErrPoolFull) {
		return "snapshot " + name + ": full"
	}
	m.must(err, "snapshot")
	v.snapshots = append(v.snapshots, modelSnapshot{name: snap, blocks: copyBlocks(v.synced)})
	return "snapshot " + name + "@" + snap
}

func (m *model) clone(name string, v *modelVolume) string {
	if len(v.snapshots) == 0 {
		return "clone " + name + ": no snapshot"
	}
	s := v.snapshots[m.rng.IntN(len(v.snapshots))]
	m.serial++
	target := fmt.Sprintf("v%d", m.serial)
	m.must(m.pool.Clone(name, s.name, target), "clone")
	v.clones[s.name]++
	m.volumes[target] = &modelVolume{sizeBytes: m.snapshotSize(name, s.name), synced: copyBlocks(s.blocks),
		pending: map[uint64][]byte{}, clones: map[string]int{}, origin: [2]string{name, s.name}}
	m.names = append(m.names, target)
	return "clone " + name + "@" + s.name + " " + target
}

func (m *model) snapshotSize(volume, snap string) uint64 {
	return m.pool.volumes[volume].findSnapshot(snap).sizeBytes
}

func (m *model) rollback(name string, v *modelVolume) string {
	if len(v.snapshots) == 0 {
		return "rollback " + name + ": no snapshot"
	}
	s := v.snapshots[m.rng.IntN(len(v.snapshots))]
	err := m.pool.Rollback(name, s.name)
	if s.name != v.snapshots[len(v.snapshots)-1].name {
		m.wantKind(err, backend.ErrBusy, "rollback past a later snapshot")
		return "rollback " + name + "@" + s.name + ": busy"
	}
	m.must(err, "rollback")
	v.synced = copyBlocks(s.blocks)
	v.pending = map[uint64][]byte{}
	v.sizeBytes = m.snapshotSize(name, s.name)
	return "rollback " + name + "@" + s.name
}

func (m *model) destroySnapshot(name string, v *modelVolume) string {
	if len(v.snapshots) == 0 {
		return "destroy snapshot of " + name + ": none"
	}
	i := m.rng.IntN(len(v.snapshots))
	s := v.snapshots[i]
	err := m.pool.DestroySnapshot(name, s.name)
	if v.clones[s.name] > 0 {
		m.wantKind(err, backend.ErrBusy, "destroy of a cloned snapshot")
		return "destroy " + name + "@" + s.name + ": busy"
	}
	m.must(err, "destroy snapshot")
	v.snapshots = append(v.snapshots[:i:i], v.snapshots[i+1:]...)
	return "destroy " + name + "@" + s.name
}

func (m *model) destroy(name string, v *modelVolume) string {
	err := m.pool.DestroyVolume(name)
	busy := v.device != nil
	for _, n := range v.clones {
		busy = busy || n > 0
	}
	if busy {
		m.wantKind(err, backend.ErrBusy, "destroy of a busy volume")
		return "destroy " + name + ": busy"
	}
	m.must(err, "destroy")
	if v.origin[0] != "" {
		m.volumes[v.origin[0]].clones[v.origin[1]]--
	}
	delete(m.volumes, name)
	return "destroy " + name
}

func (m *model) resize(name string, v *modelVolume) string {
	size := v.sizeBytes + uint64(m.rng.IntN(4))*modelBlockBytes*64
	err := m.pool.ResizeVolume(name, size)
	if errors.Is(err, backend.ErrPoolFull) {
		return "resize " + name + ": full"
	}
	m.must(err, "resize")
	v.sizeBytes = size
	return fmt.Sprintf("resize %s %d", name, size)
}

func (m *model) must(err error, what string) {
	m.t.Helper()
	if err != nil {
		m.t.Fatalf("%s: %v", what, err)
	}
}

func (m *model) wantKind(err, kind error, what string) {
	m.t.Helper()
	if !errors.Is(err, kind) {
		m.t.Fatalf("%s: got %v, want %v", what, err, kind)
	}
}

// replicate ships a volume's latest snapshot to the replica pool, whole or
// from the last one shipped, through the fast path or the byte encoding.
func (m *model) replicate(name string, v *modelVolume) string {
	if len(v.snapshots) == 0 {
		return "replicate " + name + ": no snapshot"
	}
	latest := v.snapshots[len(v.snapshots)-1]
	base := m.shipped[name]
	if base == latest.name {
		return "replicate " + name + ": up to date"
	}
	if base != "" && m.pool.volumes[name].findSnapshot(base) == nil {
		m.must(m.replicas.DestroyVolume(name), "destroy a replica whose base is gone")
		base = ""
	}
	stream, err := m.pool.Send(name, base, latest.name)
	m.must(err, "send")
	s := stream.(*Stream)
	if want := wantStreamBytes(len(latest.name), s.BlockCount(), modelBlockBytes); s.Len() != want {
		m.t.Fatalf("stream Len %d, want %d", s.Len(), want)
	}
	var r io.Reader = s
	if m.rng.IntN(2) == 0 {
		encoded, err := io.ReadAll(s)
		m.must(err, "encode")
		if uint64(len(encoded)) != s.Len() {
			m.t.Fatalf("encoded %d bytes, Len says %d", len(encoded), s.Len())
		}
		r = bytes.NewReader(encoded)
	}
	m.must(m.replicas.Receive(name, r), "receive")
	m.shipped[name] = latest.name
	_, got, err := m.replicas.lookupSnapshot(name, latest.name)
	m.must(err, "the received snapshot")
	if err := sameBlocks(treeBlocks(got.root), latest.blocks); err != nil {
		m.t.Fatalf("replica %s@%s: %v", name, latest.name, err)
	}
	if err := m.replicas.Verify(); err != nil {
		m.t.Fatal(err)
	}
	return fmt.Sprintf("replicate %s %s..%s (%d blocks)", name, base, latest.name, s.BlockCount())
}

// wantStreamBytes is the exact encoded size of a stream.
func wantStreamBytes(nameBytes, blocks int, blockSizeBytes uint64) uint64 {
	return streamHeaderBytes + uint64(nameBytes) + uint64(blocks)*(recordHeaderBytes+blockSizeBytes) + streamTrailerBytes
}

// treeBlocks lists a tree's blocks by index.
func treeBlocks(root *node) map[uint64]*block {
	out := map[uint64]*block{}
	diff(nil, root, topLevel, 0, func(index uint64, b *block) { out[index] = b })
	return out
}

func sameBlocks(got map[uint64]*block, want map[uint64][]byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d blocks, the model has %d", len(got), len(want))
	}
	for index, b := range got {
		if !bytes.Equal(b.data, want[index]) {
			return fmt.Errorf("block %d differs from the model", index)
		}
	}
	return nil
}

// check compares the pool with the model.
func (m *model) check() {
	m.t.Helper()
	if err := m.pool.Verify(); err != nil {
		m.t.Fatal(err)
	}
	if len(m.pool.volumes) != len(m.volumes) {
		m.t.Fatalf("the pool has %d volumes, the model %d", len(m.pool.volumes), len(m.volumes))
	}
	for name, mv := range m.volumes {
		v := m.pool.volumes[name]
		if err := sameBlocks(treeBlocks(v.head), mv.synced); err != nil {
			m.t.Fatalf("%s head: %v", name, err)
		}
		if v.sizeBytes != mv.sizeBytes || len(v.pending) != len(mv.pending) || len(v.snapshots) != len(mv.snapshots) {
			m.t.Fatalf("%s: size %d, %d cached, %d snapshots; the model %d, %d, %d", name, v.sizeBytes,
				len(v.pending), len(v.snapshots), mv.sizeBytes, len(mv.pending), len(mv.snapshots))
		}
		for i, s := range v.snapshots {
			if err := sameBlocks(treeBlocks(s.root), mv.snapshots[i].blocks); err != nil {
				m.t.Fatalf("%s@%s: %v", name, s.name, err)
			}
		}
	}
	if got, want := m.pool.allocatedBytes(), m.allocatedByIdentity(); got != want {
		m.t.Fatalf("allocated %d bytes, recomputed from block identity %d", got, want)
	}
}

// allocatedByIdentity recomputes the allocation from which trees hold which
// block pointers, without reference counts.
func (m *model) allocatedByIdentity() uint64 {
	holders := map[*block]int{}
	heads := map[string]map[uint64]*block{}
	for name, v := range m.pool.volumes {
		trees := []*node{v.head}
		for _, s := range v.snapshots {
			trees = append(trees, s.root)
		}
		seen := map[*block]bool{}
		for i, root := range trees {
			blocks := treeBlocks(root)
			if i == 0 {
				heads[name] = blocks
			}
			for _, b := range blocks {
				if !seen[b] {
					seen[b] = true
					holders[b]++
				}
			}
		}
	}
	var total uint64
	for range holders {
		total += modelBlockBytes
	}
	for name, v := range m.pool.volumes {
		var unique, extra uint64
		own := map[*block]bool{}
		for _, s := range v.snapshots {
			for _, b := range treeBlocks(s.root) {
				own[b] = true
			}
		}
		for _, b := range heads[name] {
			if holders[b] == 1 && !own[b] {
				unique += modelBlockBytes
			}
		}
		for index := range v.pending {
			if b := heads[name][index]; b == nil || holders[b] > 1 || own[b] {
				extra += modelBlockBytes
			}
		}
		total += charge{uniqueBytes: unique, pendingExtraBytes: extra, reservationBytes: v.charge().reservationBytes}.bytes()
	}
	return total
}

// readBack compares every volume as a device reads it with the model.
func (m *model) readBack() {
	m.t.Helper()
	for name, mv := range m.volumes {
		dev := m.device(name, mv)
		indexes := map[uint64]bool{0: true}
		for index := range mv.synced {
			indexes[index] = true
		}
		for index := range mv.pending {
			indexes[index] = true
		}
		buf := make([]byte, modelBlockBytes)
		for index := range indexes {
			n, err := dev.ReadAt(buf, int64(index*modelBlockBytes))
			if n != modelBlockBytes || (err != nil && err != io.EOF) || !bytes.Equal(buf, m.current(mv, index)) {
				m.t.Fatalf("%s block %d reads differently from the model (%d, %v)", name, index, n, err)
			}
		}
	}
}

func runModel(t *testing.T, seed uint64, poolBytes uint64, steps int) {
	m := &model{
		t:        t,
		rng:      rand.New(rand.NewPCG(seed, 7)),
		pool:     New(Options{SizeBytes: poolBytes, BlockSizeBytes: modelBlockBytes, Seed: seed}),
		volumes:  map[string]*modelVolume{},
		replicas: New(Options{SizeBytes: 1 << 30, BlockSizeBytes: modelBlockBytes, Seed: seed + 1<<32}),
		shipped:  map[string]string{},
	}
	var history []string
	defer func() {
		if t.Failed() {
			t.Logf("seed %d, last steps: %v", seed, history[max(0, len(history)-10):])
		}
	}()
	for i := 0; i < steps; i++ {
		history = append(history, m.step())
		m.check()
	}
	m.readBack()
}

func TestModelRoomyPool(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		runModel(t, seed, 1<<30, 400)
	}
}

// TestModelTightPool runs in a pool so small that creates, writes, snapshots
// and grows are refused for space: a refusal must change nothing.
func TestModelTightPool(t *testing.T) {
	for seed := uint64(100); seed <= 112; seed++ {
		runModel(t, seed, 256<<10, 400)
	}
}
