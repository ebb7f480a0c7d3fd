package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// tailOf is a second instance of w's application, as the bed's tail is: it
// writes the old primary's devices after the fail-over under its own name.
func tailOf(t *testing.T, w Workload) Workload {
	t.Helper()
	rng := rand.New(rand.NewPCG(99, 3))
	switch w.(type) {
	case *WordPress:
		return NewWordPress(w.Name()+"~tail", rng, smallLayouts()...)
	case *Gitea:
		return NewGitea(w.Name()+"~tail", rng, smallLayouts()...)
	}
	t.Fatalf("no tail for %T", w)
	return nil
}

// failedOver runs w on site a, takes the replica at the cut, writes on
// after the cut, fails over to the replica (the verdict discards what the
// old primary wrote since) and lets a tail instance write on the old
// devices. It returns the old primary, the replica, the cut and the last
// write of w on the old primary.
func failedOver(t *testing.T, w, tail Workload) (old, replica site, cut, last time.Time) {
	t.Helper()
	old = newSite(w)
	cut = run(t, w, old, epoch, 30)
	replica = old.snapshot()
	next := run(t, w, old, cut, 20)
	last = next.Add(-stepInterval)
	v := w.Verify(replica.devices(), next)
	requireConsistent(t, v)
	if v.LostAcknowledged() == 0 {
		t.Fatal("the fail-over lost nothing: no tail to check")
	}
	if err := w.Resume(v); err != nil {
		t.Fatal(err)
	}
	run(t, tail, old, next, 10)
	return old, replica, cut, last
}

// The kept tail holds every acknowledged write the old primary made after
// the cut -- the ones the fail-over lost included -- and the tail
// instance's own; the replica, stale since the cut, holds none of them.
func TestCheckKeptCountsTheOldPrimarysWrites(t *testing.T) {
	onEachModel(t, 7, func(t *testing.T, w Workload) {
		tail := tailOf(t, w)
		old, replica, cut, last := failedOver(t, w, tail)
		kept, err := CheckKept(w, old.devices(), cut, last, tail.Name())
		if err != nil {
			t.Fatal(err)
		}
		if kept.Acknowledged() == 0 || kept.Held() != kept.Acknowledged() || kept.Lost()+kept.Corrupt() != 0 {
			t.Fatalf("the kept tail does not hold the writes after the cut:\n%s", kept)
		}
		own, err := CheckKept(tail, old.devices(), time.Time{}, last.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if own.Acknowledged() == 0 || own.Held() != own.Acknowledged() {
			t.Fatalf("the kept tail does not hold the tail's own writes:\n%s", own)
		}
		stale, err := CheckKept(w, replica.devices(), cut, last, tail.Name())
		if err != nil {
			t.Fatal(err)
		}
		if stale.Held() != 0 || stale.Lost() != stale.Acknowledged() || stale.Corrupt() != 0 {
			t.Fatalf("a copy from the cut holds writes after it:\n%s", stale)
		}
		if v := stale.Volumes[0]; len(v.Findings) == 0 || v.Findings[0].Kind != NotKept {
			t.Fatalf("the lost writes are not named: %+v", v.Findings)
		}
	})
}

// A kept copy whose block is damaged, or holds a write the window cannot
// explain (the new branch's, issued after it), counts those writes corrupt.
func TestCheckKeptCountsCorruptBlocks(t *testing.T) {
	onEachModel(t, 8, func(t *testing.T, w Workload) {
		tail := tailOf(t, w)
		old, replica, cut, last := failedOver(t, w, tail)
		for _, name := range old.names() {
			damaged := old.snapshot()
			for _, b := range damaged[name].Blocks() {
				damaged[name].FlipBit(b*BlockSizeBytes+100, 3)
			}
			kept, err := CheckKept(w, damaged.devices(), cut, last, tail.Name())
			if err != nil {
				t.Fatal(err)
			}
			v, _ := kept.volume(name)
			if v.Acknowledged > 0 && (v.Corrupt != v.Acknowledged || v.Held != 0) {
				t.Fatalf("%s: flipped bits count as held:\n%s", name, kept)
			}
		}
		run(t, w, replica, last.Add(time.Minute), 10) // the new branch
		later, err := CheckKept(w, replica.devices(), cut, last, tail.Name())
		if err != nil {
			t.Fatal(err)
		}
		if later.Corrupt() == 0 || later.Held() != 0 {
			t.Fatalf("writes after the window count as held:\n%s", later)
		}
	})
}

// A volume with no kept copy to read (the tail snapshot is missing) holds
// none of the window's writes: each is lost, and named; none is corrupt, for
// no block was read that a write could fail to explain.
func TestCheckKeptCountsAMissingCopyLost(t *testing.T) {
	onEachModel(t, 9, func(t *testing.T, w Workload) {
		tail := tailOf(t, w)
		old, _, cut, last := failedOver(t, w, tail)
		for _, name := range old.names() {
			devices := old.devices()
			delete(devices, name)
			kept, err := CheckKept(w, devices, cut, last, tail.Name())
			if err != nil {
				t.Fatal(err)
			}
			v, _ := kept.volume(name)
			if v.Acknowledged > 0 && (v.Lost != v.Acknowledged || v.Corrupt != 0 || len(v.Findings) == 0) {
				t.Fatalf("%s without a copy does not count its writes lost:\n%s", name, kept)
			}
		}
	})
}

// Only this package's models have a history to check a copy against.
func TestCheckKeptRefusesOtherWorkloads(t *testing.T) {
	w := NewGitea("gitea", pcg(1))
	if _, err := CheckKept(struct{ Workload }{w}, nil, epoch, epoch); !errors.Is(err, ErrNotAModel) {
		t.Fatalf("CheckKept of a wrapped workload: %v", err)
	}
	kept, err := CheckKept(w, Devices{}, epoch, epoch)
	if err != nil || kept.Acknowledged() != 0 || fmt.Sprint(kept) == "" {
		t.Fatalf("an empty window: %v, %s", err, kept)
	}
}
