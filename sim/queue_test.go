package sim

import (
	"fmt"
	"testing"
	"time"
)

// naiveQueue is the obviously correct scheduler: a slice scanned for the
// earliest (time, sequence) pair. The fuzz test holds the heap to it.
type naiveQueue struct {
	now    time.Duration
	events []naiveEvent
}

type naiveEvent struct {
	at    time.Duration
	id    int
	state int // 0 pending, 1 ran, 2 cancelled
}

func (q *naiveQueue) schedule(d time.Duration) int {
	q.events = append(q.events, naiveEvent{at: q.now + d, id: len(q.events)})
	return len(q.events) - 1
}

func (q *naiveQueue) cancel(id int) bool {
	if q.events[id].state != 0 {
		return false
	}
	q.events[id].state = 2
	return true
}

// step runs the earliest pending event; ids are sequence numbers, so the
// first of equal times in id order is the first scheduled.
func (q *naiveQueue) step() (int, bool) {
	best := -1
	for i, e := range q.events {
		if e.state == 0 && (best < 0 || e.at < q.events[best].at) {
			best = i
		}
	}
	if best < 0 {
		return -1, false
	}
	q.events[best].state = 1
	q.now = q.events[best].at
	return best, true
}

// FuzzSchedulerMatchesNaiveModel runs byte-coded operations (schedule with a
// small delay so that ties abound, cancel, step) against both schedulers and
// requires the same events in the same order at the same times.
func FuzzSchedulerMatchesNaiveModel(f *testing.F) {
	f.Add([]byte{0, 3, 0, 3, 0, 0, 2, 0, 1, 1, 2, 0, 2, 0})
	f.Add([]byte{0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 2, 2, 2, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		w := NewWorld(1)
		var naive naiveQueue
		var timers []Timer
		ran := -1
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%3, int(ops[i+1])
			switch {
			case op == 0:
				d := time.Duration(arg%8) * time.Millisecond
				id := naive.schedule(d)
				timers = append(timers, w.Schedule(d, fmt.Sprint(id), func() { ran = id }))
			case op == 1 && len(timers) > 0:
				id := arg % len(timers)
				if got, want := timers[id].Cancel(), naive.cancel(id); got != want {
					t.Fatalf("op %d: Cancel(%d) = %v, naive %v", i/2, id, got, want)
				}
			default:
				want, ok := naive.step()
				ran = -1
				if got := w.Step(); got != ok || ran != want || w.Elapsed() != naive.now {
					t.Fatalf("op %d: Step ran %d (%v) at +%s, naive %d (%v) at +%s",
						i/2, ran, got, w.Elapsed(), want, ok, naive.now)
				}
			}
			if pending := countPending(naive.events); w.Pending() != pending {
				t.Fatalf("op %d: Pending() = %d, naive %d", i/2, w.Pending(), pending)
			}
		}
	})
}

func countPending(events []naiveEvent) int {
	n := 0
	for _, e := range events {
		if e.state == 0 {
			n++
		}
	}
	return n
}
