package workload

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFailoverResumeAndFailback tells a volume's life: site A runs; B holds a
// replica from a snapshot; A is cut off and keeps writing (the diverged tail);
// B fails over, verifies, resumes and writes on; A's tail is not B's history;
// B fails back to A with a full copy and the history keeps verifying.
func TestFailoverResumeAndFailback(t *testing.T) {
	onEachModel(t, 20, func(t *testing.T, w Workload) {
		a := newSite(w)
		now := run(t, w, a, epoch, 40)
		b := a.snapshot() // the last replicated snapshot, Sk
		tailStart := now
		now = run(t, w, a, now, 10) // A cut off, still writing: the diverged tail

		failover := w.Verify(b.devices(), now)
		requireConsistent(t, failover)
		if failover.LostAcknowledged() == 0 {
			t.Fatal("the tail's acknowledged writes are not counted as lost")
		}
		for _, vv := range failover.Volumes {
			if vv.Lost.Acknowledged > 0 && vv.Lost.Oldest.Before(tailStart) {
				t.Errorf("%s: oldest lost write at %s, before the tail began at %s", vv.Volume, vv.Lost.Oldest, tailStart)
			}
		}
		if err := w.Resume(failover); err != nil {
			t.Fatal(err)
		}
		if err := w.Resume(failover); !errors.Is(err, ErrStaleVerdict) {
			t.Fatalf("a verdict resumed twice: %v", err)
		}
		now = run(t, w, b, now, 30) // B is the active end

		onB := w.Verify(b.devices(), now)
		requireConsistent(t, onB)
		if onB.LostAcknowledged() != 0 {
			t.Fatalf("B lost %d acknowledged writes of its own history", onB.LostAcknowledged())
		}
		for _, vv := range onB.Volumes {
			prefix := volumeVerdict(t, failover, vv.Volume).Prefix
			changes, err := w.Changes(vv.Volume, prefix.Seq)
			if err != nil {
				t.Fatal(err)
			}
			if vv.Prefix.Writes != prefix.Writes+changes.Writes || changes.Blocks > changes.Writes {
				t.Errorf("%s: %d writes in the prefix; %d at the fail-over plus %+v since", vv.Volume, vv.Prefix.Writes, prefix.Writes, changes)
			}
		}

		requireDivergedTail(t, w, a, now)

		// Fail back: A receives B's content and becomes the active end.
		a = b.snapshot()
		relocate := w.Verify(a.devices(), now)
		requireConsistent(t, relocate)
		if relocate.LostAcknowledged() != 0 {
			t.Fatalf("a planned relocate lost %d acknowledged writes", relocate.LostAcknowledged())
		}
		if err := w.Resume(relocate); err != nil {
			t.Fatal(err)
		}
		now = run(t, w, a, now, 30)
		requireConsistent(t, w.Verify(a.devices(), now))
	})
}

// requireDivergedTail checks that the old site, holding writes the fail-over
// discarded, does not verify as the history and cannot be resumed from.
func requireDivergedTail(t *testing.T, w Workload, old site, now time.Time) {
	t.Helper()
	v := w.Verify(old.devices(), now)
	if v.Consistent() {
		t.Fatal("the diverged tail verifies as the new history")
	}
	if err := w.Resume(v); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("resume from the diverged tail: %v", err)
	}
	for _, violation := range v.Violations() {
		if violation.Kind == UnknownWrite && strings.Contains(violation.Found, "discarded by resume 1") {
			return
		}
	}
	t.Fatalf("no violation names a discarded write:\n%s", v)
}

// TestRepeatedFailoversKeepVerifying: twelve hops, each losing a tail.
func TestRepeatedFailoversKeepVerifying(t *testing.T) {
	onEachModel(t, 21, func(t *testing.T, w Workload) {
		active := newSite(w)
		now := epoch
		for hop := range 12 {
			now = run(t, w, active, now, 8)
			replica := active.snapshot()
			now = run(t, w, active, now, 1+hop%3)
			v := w.Verify(replica.devices(), now)
			requireConsistent(t, v)
			if err := w.Resume(v); err != nil {
				t.Fatalf("hop %d: %v", hop, err)
			}
			active = replica
		}
		now = run(t, w, active, now, 20)
		requireConsistent(t, w.Verify(active.devices(), now))
	})
}

func TestResumeRefusesAnotherWorkloadsVerdict(t *testing.T) {
	one, other := NewWordPress("one", pcg(1)), NewWordPress("other", pcg(1))
	s := newSite(one)
	now := run(t, one, s, epoch, 3)
	if err := other.Resume(one.Verify(s.devices(), now)); !errors.Is(err, ErrStaleVerdict) {
		t.Fatalf("resume with another workload's verdict: %v", err)
	}
	v := one.Verify(s.devices(), now)
	run(t, one, s, now, 1)
	if err := one.Resume(v); !errors.Is(err, ErrStaleVerdict) {
		t.Fatalf("resume with a verdict older than the last step: %v", err)
	}
}

func TestVerifyReportsAnotherWorkloadsBlocksAsForeign(t *testing.T) {
	one, other := NewWordPress("one", pcg(1)), NewWordPress("other", pcg(1))
	s := newSite(one)
	now := run(t, one, s, epoch, 10)
	run(t, other, s, now, 10) // the other instance writes over the same devices
	v := one.Verify(s.devices(), now)
	if k := kinds(volumeVerdict(t, v, WordPressDatabase)); k[Foreign] == 0 {
		t.Fatalf("another workload's blocks are not foreign:\n%s", v)
	}
}

func TestSameSeedWritesSameBytes(t *testing.T) {
	for _, m := range models {
		t.Run(m.name, func(t *testing.T) {
			sites := make([]site, 3)
			results := make([][]StepResult, 3)
			for i, seed := range []uint64{30, 30, 31} {
				w := m.make(seed, smallLayouts()...)
				sites[i] = newSite(w)
				now := epoch
				for range 60 {
					result, err := w.Step(now, sites[i].devices())
					if err != nil {
						t.Fatal(err)
					}
					results[i] = append(results[i], result)
					now = now.Add(stepInterval)
				}
			}
			if !sameBytes(sites[0], sites[1]) || !slices.Equal(results[0], results[1]) {
				t.Fatal("one seed wrote different bytes or steps twice")
			}
			if sameBytes(sites[0], sites[2]) {
				t.Fatal("two seeds wrote the same bytes")
			}
		})
	}
}

func sameBytes(a, b site) bool {
	for name, dev := range a {
		blocks := dev.Blocks()
		if len(blocks) != len(b[name].Blocks()) {
			return false
		}
		for _, block := range blocks {
			if !bytes.Equal(dev.Block(block), b[name].Block(block)) {
				return false
			}
		}
	}
	return true
}

func TestStepBackInTimePanics(t *testing.T) {
	w := NewWordPress("wordpress", pcg(1))
	s := newSite(w)
	run(t, w, s, epoch.Add(time.Minute), 1)
	defer func() {
		if recover() == nil {
			t.Fatal("a step back in time was accepted")
		}
	}()
	_, _ = w.Step(epoch, s.devices())
}

func TestStepRefusesWithoutItsDevices(t *testing.T) {
	w := NewGitea("gitea", pcg(1))
	s := newSite(w)
	devices := s.devices()
	delete(devices, GiteaDatabase)
	if _, err := w.Step(epoch, devices); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("step without the db device: %v", err)
	}
	v := w.Verify(devices, epoch)
	if k := kinds(volumeVerdict(t, v, GiteaDatabase)); k[Unreadable] != 1 {
		t.Fatalf("verify without the db device:\n%s", v)
	}
	if _, err := w.Changes("nope", 0); !errors.Is(err, ErrUnknownVolume) {
		t.Fatalf("changes of an unknown volume: %v", err)
	}
}

func TestFullRepositoryRefusesThePushWithoutStopping(t *testing.T) {
	w := NewGitea("gitea", pcg(1), WithRepository(RepositoryLayout{ObjectBlocks: 40, Refs: []string{"main"}}))
	s := newSite(w)
	now, full := epoch, 0
	for range 40 {
		result, err := w.Step(now, s.devices())
		switch {
		case errors.Is(err, ErrVolumeFull):
			full++
			if result.Writes != 0 || result.Acknowledged {
				t.Fatalf("a refused push wrote: %+v", result)
			}
		case err != nil:
			t.Fatalf("step: %v", err)
		}
		now = now.Add(time.Second)
	}
	if full == 0 {
		t.Fatal("40 object blocks never filled up")
	}
	requireConsistent(t, w.Verify(s.devices(), now))
}
