package workload

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/workload/workloadtest"
)

func TestHealthyRunHoldsItsWholeHistory(t *testing.T) {
	for _, m := range models {
		for layout, opts := range map[string][]Option{"default": nil, "small": smallLayouts()} {
			t.Run(m.name+"/"+layout, func(t *testing.T) {
				w := m.make(1, opts...)
				s := newSite(w)
				writes, bytes := 0, uint64(0)
				now := epoch
				for range 200 {
					result, err := w.Step(now, s.devices())
					if err != nil || !result.Acknowledged || result.Writes == 0 || result.Syncs == 0 {
						t.Fatalf("step: %+v, %v", result, err)
					}
					writes, bytes = writes+result.Writes, bytes+result.Bytes
					now = now.Add(stepInterval)
				}
				v := w.Verify(s.devices(), now)
				requireConsistent(t, v)
				total, written := 0, uint64(0)
				for _, vv := range v.Volumes {
					changes, err := w.Changes(vv.Volume, 0)
					if err != nil {
						t.Fatal(err)
					}
					if vv.Prefix.Writes != changes.Writes || vv.Lost != (LostWrites{}) {
						t.Errorf("%s: prefix %+v, lost %+v; want all %d writes, none lost", vv.Volume, vv.Prefix, vv.Lost, changes.Writes)
					}
					if vv.Prefix.At != now.Add(-stepInterval) && vv.Prefix.At.After(now) {
						t.Errorf("%s: prefix at %s", vv.Volume, vv.Prefix.At)
					}
					total, written = total+vv.Prefix.Writes, written+vv.BytesWritten
				}
				if total != writes || written != bytes {
					t.Errorf("verdict counts %d writes, %d bytes; the steps issued %d, %d", total, written, writes, bytes)
				}
			})
		}
	}
}

// TestSnapshotBetweenStepsLosesTheLaterWrites: a snapshot between two Syncs
// verifies as a prefix; the acknowledged writes after it are lost, and the
// oldest of them is as old as the first step after the snapshot.
func TestSnapshotBetweenStepsLosesTheLaterWrites(t *testing.T) {
	onEachModel(t, 2, func(t *testing.T, w Workload) {
		s := newSite(w)
		cutAt := run(t, w, s, epoch, 40)
		snapshot := s.snapshot()
		lastBefore := map[string]uint64{}
		for _, name := range s.names() {
			lastBefore[name] = historyOf(t, w, name).nextSeq
		}
		writesAfter, now := 0, cutAt
		for range 15 {
			result, err := w.Step(now, s.devices())
			if err != nil {
				t.Fatal(err)
			}
			writesAfter += result.Writes
			now = now.Add(stepInterval)
		}
		now = now.Add(time.Minute) // verified a minute after the last step
		v := w.Verify(snapshot.devices(), now)
		requireConsistent(t, v)
		oldest := time.Time{}
		for _, vv := range v.Volumes {
			if vv.Prefix.Seq != lastBefore[vv.Volume] {
				t.Errorf("%s: prefix ends at write #%d, the snapshot was taken after #%d", vv.Volume, vv.Prefix.Seq, lastBefore[vv.Volume])
			}
			if vv.Lost.Acknowledged > 0 && (oldest.IsZero() || vv.Lost.Oldest.Before(oldest)) {
				oldest = vv.Lost.Oldest
			}
			if vv.Lost.Acknowledged > 0 && vv.Lost.Age != now.Sub(vv.Lost.Oldest) {
				t.Errorf("%s: loss age %s for oldest %s at %s", vv.Volume, vv.Lost.Age, vv.Lost.Oldest, now)
			}
			// Failing a second after its first lost write, the RPO is that
			// second, whenever the verdict ran.
			if failure := vv.Lost.Oldest.Add(time.Second); vv.Lost.Acknowledged > 0 && vv.RPO(failure) != time.Second {
				t.Errorf("%s: RPO %s for a failure at %s, the first lost write at %s", vv.Volume, vv.RPO(failure), failure, vv.Lost.Oldest)
			}
		}
		if got := v.LostAcknowledged(); got != writesAfter {
			t.Errorf("lost %d acknowledged writes; %d were issued and acknowledged after the snapshot", got, writesAfter)
		}
		if !oldest.Equal(cutAt) {
			t.Errorf("oldest lost write at %s; the first step after the snapshot ran at %s", oldest, cutAt)
		}
	})
}

// TestEveryPointOfARunIsAPrefix: a crash or snapshot after any write -- in the
// middle of a transaction, between a file's data and its directory entry --
// verifies as exactly that prefix, its later writes lost or unacknowledged.
func TestEveryPointOfARunIsAPrefix(t *testing.T) {
	onEachModel(t, 3, func(t *testing.T, w Workload) {
		s := recordingSite(w)
		now := run(t, w, s, epoch, 60)
		for _, name := range s.names() {
			log, spec := s[name].Log(), specOf(t, w, name)
			if len(log) != len(historyOf(t, w, name).writes) {
				t.Fatalf("%s: device logged %d writes, history has %d", name, len(log), len(historyOf(t, w, name).writes))
			}
			for n := 0; n <= len(log); n += 1 + n%7 {
				devices := s.devices()
				devices[name] = replay(log, n, spec.SizeBytes)
				vv := volumeVerdict(t, w.Verify(devices, now), name)
				if !vv.Consistent() || vv.Prefix.Writes != n {
					t.Fatalf("%s after %d of %d writes: prefix %d writes, violations %v", name, n, len(log), vv.Prefix.Writes, vv.Violations)
				}
				if lost := vv.Lost.Acknowledged + vv.Lost.Unacknowledged; lost != len(log)-n {
					t.Fatalf("%s after %d of %d writes: %d lost", name, n, len(log), lost)
				}
			}
		}
	})
}

func TestFailedSyncIsNotAcknowledgedAndStopsTheWorkload(t *testing.T) {
	onEachModel(t, 4, func(t *testing.T, w Workload) {
		s := newSite(w)
		now := run(t, w, s, epoch, 20)
		s["db"].SetSyncFails(true) // quorum lost: writes land, the barrier fails
		result, err := w.Step(now, s.devices())
		if !errors.Is(err, workloadtest.ErrQuorumLost) || result.Acknowledged || result.Writes == 0 {
			t.Fatalf("step on a device without quorum: %+v, %v", result, err)
		}
		if _, err := w.Step(now.Add(stepInterval), s.devices()); !errors.Is(err, ErrStopped) {
			t.Fatalf("step after a failed sync: %v; want ErrStopped", err)
		}
		s["db"].Crash() // the node goes down: the unsynced writes are gone
		s["db"].Restart()
		s["db"].SetSyncFails(false)
		v := w.Verify(s.devices(), now.Add(time.Minute))
		requireConsistent(t, v)
		db := volumeVerdict(t, v, "db")
		if v.LostAcknowledged() != 0 || db.Lost.Unacknowledged == 0 {
			t.Fatalf("lost %d acknowledged, %d unacknowledged writes; want 0 and some", v.LostAcknowledged(), db.Lost.Unacknowledged)
		}
		if err := w.Resume(v); err != nil {
			t.Fatal(err)
		}
		now = run(t, w, s, now.Add(time.Minute), 40)
		requireConsistent(t, w.Verify(s.devices(), now))
	})
}

func TestFencedDeviceRefusesTheStep(t *testing.T) {
	onEachModel(t, 5, func(t *testing.T, w Workload) {
		s := newSite(w)
		now := run(t, w, s, epoch, 20)
		for _, dev := range s {
			dev.SetFenced(true)
		}
		result, err := w.Step(now, s.devices())
		if !errors.Is(err, workloadtest.ErrFenced) || result.Acknowledged {
			t.Fatalf("step on fenced devices: %+v, %v", result, err)
		}
		v := w.Verify(s.devices(), now)
		requireConsistent(t, v)
		if v.LostAcknowledged() != 0 {
			t.Fatalf("a fenced step lost %d acknowledged writes", v.LostAcknowledged())
		}
		for _, dev := range s {
			dev.SetFenced(false)
		}
		if err := w.Resume(v); err != nil {
			t.Fatal(err)
		}
		run(t, w, s, now, 10)
	})
}

// TestTornStateIsDetected: one block from a later write while an earlier
// write is missing is a state after no prefix; the violation names the block,
// the write it expected and the write it found.
func TestTornStateIsDetected(t *testing.T) {
	for _, m := range models {
		for _, name := range newSite(m.make(0)).names() {
			t.Run(m.name+"/"+name, func(t *testing.T) {
				w := m.make(6, smallLayouts()...)
				s := newSite(w)
				now := run(t, w, s, epoch, 30)
				h := historyOf(t, w, name)
				early, before := s.snapshot(), len(h.writes)
				now = run(t, w, s, now, 10)
				missing := h.writes[before] // the first write after the early snapshot
				var later write             // a later write to another block, still what its block holds
				for i := len(h.writes) - 1; i > before; i-- {
					if h.writes[i].block != missing.block && int(h.last[h.writes[i].block]) == i {
						later = h.writes[i]
						break
					}
				}
				if later.seq == 0 {
					t.Fatal("no later write to another block")
				}
				torn := early.devices()
				dev := early[name].Copy()
				dev.SetBlock(int64(later.block), s[name].Block(int64(later.block)))
				torn[name] = dev
				vv := volumeVerdict(t, w.Verify(torn, now), name)
				got := findViolation(vv, Torn, later.block)
				if got == nil {
					t.Fatalf("no torn violation at block %d:\n%v", later.block, vv.Violations)
				}
				if !strings.Contains(got.Found, fmt.Sprintf("write #%d ", later.seq)) || got.Volume != name || got.Expected == "" {
					t.Errorf("violation %s does not name write #%d", got, later.seq)
				}

				// The converse: the late state with the early write's block reverted.
				reverted := s.devices()
				dev = s[name].Copy()
				dev.SetBlock(int64(missing.block), early[name].Block(int64(missing.block)))
				reverted[name] = dev
				vv = volumeVerdict(t, w.Verify(reverted, now), name)
				if findViolation(vv, Torn, missing.block) == nil && int(h.last[missing.block]) != before {
					t.Fatalf("block %d reverted past write #%d: no torn violation:\n%v", missing.block, missing.seq, vv.Violations)
				}
			})
		}
	}
}

func TestFlippedBitIsDetected(t *testing.T) {
	for _, m := range models {
		w := m.make(7, smallLayouts()...)
		s := newSite(w)
		now := run(t, w, s, epoch, 30)
		for _, name := range s.names() {
			blocks := s[name].Blocks()
			for _, at := range []int64{3, 20, headerSizeBytes + 5, BlockSizeBytes - 1} { // magic, seq, payload, last byte
				block := blocks[int(at)%len(blocks)]
				corrupt := s.devices()
				dev := s[name].Copy()
				dev.FlipBit(block*BlockSizeBytes+at, uint(at))
				corrupt[name] = dev
				vv := volumeVerdict(t, w.Verify(corrupt, now), name)
				if vv.Consistent() {
					t.Errorf("%s/%s: bit %d of block %d flipped, verdict consistent", m.name, name, at, block)
					continue
				}
				if at >= 8 && findViolation(vv, Checksum, uint64(block)) == nil {
					t.Errorf("%s/%s: flipped byte %d of block %d: %v", m.name, name, at, block, vv.Violations)
				}
			}
		}
	}
}

func findViolation(vv VolumeVerdict, kind ViolationKind, block uint64) *Violation {
	for i, v := range vv.Violations {
		if v.Kind == kind && v.Block == block {
			return &vv.Violations[i]
		}
	}
	return nil
}
