package workload

import (
	"bytes"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/baton-dr/baton/workload/workloadtest"
)

// naivePrefix is the naive version of checkPrefix: it replays a device's
// recorded writes one by one and returns the number of writes after which
// the blocks they touched held exactly what the device holds now.
func naivePrefix(log []workloadtest.Write, dev *workloadtest.Device) (int, bool) {
	image := map[int64][]byte{}
	for _, w := range log {
		if w.Offset%BlockSizeBytes != 0 || len(w.Data) != BlockSizeBytes {
			panic("naivePrefix: a write that is not one aligned block")
		}
		image[w.Offset/BlockSizeBytes] = dev.Block(w.Offset / BlockSizeBytes)
	}
	state := map[int64][]byte{}
	matches := func(block int64) bool {
		if data, ok := state[block]; ok {
			return bytes.Equal(data, image[block])
		}
		return bytes.Equal(image[block], zeroBlock[:])
	}
	mismatched := 0
	for block := range image {
		if !matches(block) {
			mismatched++
		}
	}
	for n := 0; ; n++ {
		if mismatched == 0 {
			return n, true
		}
		if n == len(log) {
			return 0, false
		}
		block := log[n].Offset / BlockSizeBytes
		before := matches(block)
		state[block] = log[n].Data
		switch after := matches(block); {
		case before && !after:
			mismatched++
		case !before && after:
			mismatched--
		}
	}
}

// fixture is one recorded run with a snapshot after every step, shared by the
// differential test and the fuzz targets. Verify does not change a model, so
// one fixture serves every input.
type fixture struct {
	w         Workload
	site      site   // the final state; its devices hold the recorded logs
	snapshots []site // after each step
}

var (
	fixturesOnce sync.Once
	fixtures     []fixture
)

func sharedFixtures(t testing.TB) []fixture {
	fixturesOnce.Do(func() {
		for _, m := range models {
			w := m.make(40, smallLayouts()...)
			s := recordingSite(w)
			f := fixture{w: w, site: s}
			now := epoch
			for range 40 {
				now = run(t, w, s, now, 1)
				f.snapshots = append(f.snapshots, s.snapshot())
			}
			fixtures = append(fixtures, f)
		}
	})
	return fixtures
}

// mutate builds a device from a snapshot and a list of 3-byte operations:
// copy a block from another snapshot (later or earlier), zero a block, or
// flip a bit.
func (f fixture) mutate(volume string, base int, ops []byte) *workloadtest.Device {
	dev := f.snapshots[base%len(f.snapshots)][volume].Copy()
	blocks := f.site[volume].Blocks()
	for i := 0; i+2 < len(ops) && i < 3*16; i += 3 {
		block := blocks[int(ops[i+1])%len(blocks)]
		switch ops[i] % 4 {
		case 0, 1:
			dev.SetBlock(block, f.snapshots[int(ops[i+2])%len(f.snapshots)][volume].Block(block))
		case 2:
			dev.SetBlock(block, make([]byte, BlockSizeBytes))
		case 3:
			dev.FlipBit(block*BlockSizeBytes+int64(ops[i+2])*16, uint(ops[i+2]))
		}
	}
	return dev
}

// agree checks Verify against the naive oracle on one mutated volume.
func (f fixture) agree(t *testing.T, volume string, dev *workloadtest.Device) {
	devices := f.site.devices()
	devices[volume] = dev
	vv := volumeVerdict(t, f.w.Verify(devices, epoch), volume)
	n, ok := naivePrefix(f.site[volume].Log(), dev)
	if vv.Consistent() != ok || (ok && vv.Prefix.Writes != n) {
		t.Fatalf("%s: Verify says consistent=%v after %d writes; the oracle says %v after %d:\n%v",
			volume, vv.Consistent(), vv.Prefix.Writes, ok, n, vv.Violations)
	}
}

func TestVerifyAgreesWithTheNaiveOracle(t *testing.T) {
	rng := pcg(41)
	for _, f := range sharedFixtures(t) {
		for _, volume := range f.site.names() {
			for trial := range 300 {
				ops := make([]byte, 3*(trial%5))
				for i := range ops {
					ops[i] = byte(rng.UintN(256))
				}
				f.agree(t, volume, f.mutate(volume, rng.IntN(len(f.snapshots)), ops))
			}
		}
	}
}

// FuzzVerifyMutations: snapshots mixed block by block, zeroed blocks and
// flipped bits; Verify must agree with the naive oracle and never panic.
func FuzzVerifyMutations(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(10), []byte{})
	f.Add(uint8(1), uint8(1), uint8(20), []byte{0, 5, 39})
	f.Add(uint8(0), uint8(1), uint8(30), []byte{2, 7, 0, 3, 9, 100})
	f.Fuzz(func(t *testing.T, model, volume, base uint8, ops []byte) {
		fx := sharedFixtures(t)[int(model)%len(models)]
		names := fx.site.names()
		name := names[int(volume)%len(names)]
		fx.agree(t, name, fx.mutate(name, int(base), ops))
	})
}

// FuzzVerifyGarbage: devices whose touched blocks hold arbitrary bytes --
// raw, or sealed with a valid header of this volume so that the application
// parsers read arbitrary payloads -- never verify as consistent unless every
// block is zero, and never panic.
func FuzzVerifyGarbage(f *testing.F) {
	f.Add(uint8(0), false, []byte{})
	f.Add(uint8(1), true, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint8(0), true, bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, model uint8, sealed bool, data []byte) {
		fx := sharedFixtures(t)[int(model)%len(models)]
		devices := Devices{}
		allZero := true
		offset := 0
		for _, name := range fx.site.names() {
			h := historyOf(t, fx.w, name)
			dev := workloadtest.NewDevice(int64(specOf(t, fx.w, name).SizeBytes))
			for _, block := range h.blocks() {
				buf := garbageBlock(data, &offset, sealed, h, block)
				allZero = allZero && bytes.Equal(buf, zeroBlock[:])
				dev.SetBlock(int64(block), buf)
			}
			devices[name] = dev
		}
		v := fx.w.Verify(devices, epoch)
		if v.Consistent() && !allZero {
			t.Fatalf("garbage verified as consistent:\n%s", v)
		}
		for _, vv := range v.Volumes {
			if vv.Consistent() && vv.Prefix.Writes != 0 {
				t.Fatalf("%s: garbage verified as a prefix of %d writes", vv.Volume, vv.Prefix.Writes)
			}
		}
	})
}

// garbageBlock takes the next block's bytes from data, cycled.
func garbageBlock(data []byte, offset *int, sealed bool, h *history, block uint64) []byte {
	buf := make([]byte, BlockSizeBytes)
	if len(data) == 0 {
		return buf
	}
	for i := range buf {
		buf[i] = data[(*offset+i)%len(data)]
	}
	*offset += BlockSizeBytes + 1 // shift, so that blocks differ
	if sealed {
		kind := BlockKind(1 + buf[0]%uint8(KindObject))
		seq := 1 + binary.LittleEndian.Uint64(buf[8:])%(h.nextSeq+2)
		sealBlock(buf, header{kind: kind, seq: seq, block: block, workload: h.workload, volume: h.volume})
	}
	return buf
}
