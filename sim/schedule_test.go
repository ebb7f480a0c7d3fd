package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/panictest"
)

func TestEqualTimesRunInSchedulingOrder(t *testing.T) {
	w := NewWorld(1)
	var order []string
	record := func(name string) func() { return func() { order = append(order, name) } }
	// Interleave two instants so the heap must reorder, and schedule a
	// same-instant event from inside one: it runs after those already queued.
	for i := range 50 {
		w.After(time.Second, fmt.Sprintf("a%d", i), record(fmt.Sprintf("a%d", i)))
		w.After(0, fmt.Sprintf("z%d", i), record(fmt.Sprintf("z%d", i)))
	}
	w.After(time.Second, "spawner", func() {
		order = append(order, "spawner")
		w.After(0, "spawned", record("spawned"))
	})
	w.After(time.Second, "last", record("last"))
	w.RunFor(time.Second)
	var want []string
	for i := range 50 {
		want = append(want, fmt.Sprintf("z%d", i))
	}
	for i := range 50 {
		want = append(want, fmt.Sprintf("a%d", i))
	}
	want = append(want, "spawner", "last", "spawned")
	if !slices.Equal(order, want) {
		t.Fatalf("order = %v\nwant    %v", order, want)
	}
}

func TestCancel(t *testing.T) {
	w := NewWorld(1)
	ran := map[string]bool{}
	mark := func(name string) func() { return func() { ran[name] = true } }
	keep := w.Schedule(time.Second, "keep", mark("keep"))
	drop := w.Schedule(time.Second, "drop", mark("drop"))
	late := w.Schedule(2*time.Second, "late", mark("late"))
	w.After(1500*time.Millisecond, "canceller", func() {
		if !late.Cancel() {
			t.Error("cancelling a pending event from inside another reported false")
		}
	})
	if !drop.Cancel() {
		t.Fatal("Cancel of a pending event = false")
	}
	if drop.Cancel() || drop.Pending() {
		t.Fatal("a second Cancel reported true, or the event stayed pending")
	}
	if w.Pending() != 3 {
		t.Fatalf("Pending() = %d after a cancel, want 3", w.Pending())
	}
	w.RunFor(time.Minute)
	if !ran["keep"] || ran["drop"] || ran["late"] {
		t.Fatalf("ran %v; want keep only", ran)
	}
	if keep.Cancel() {
		t.Fatal("Cancel after the event ran = true")
	}
	if (Timer{}).Cancel() || (Timer{}).Pending() {
		t.Fatal("the zero Timer cancelled something")
	}
}

func TestRunForRunsDueEventsAndMovesTheClock(t *testing.T) {
	w := NewWorld(1)
	var ran []string
	for _, d := range []time.Duration{0, time.Second, 2 * time.Second, 2*time.Second + 1} {
		w.After(d, d.String(), func() { ran = append(ran, d.String()) })
	}
	if n := w.RunFor(2 * time.Second); n != 3 {
		t.Fatalf("RunFor(2s) ran %d events %v, want 3 (the deadline is inclusive)", n, ran)
	}
	if w.Elapsed() != 2*time.Second {
		t.Fatalf("clock at +%s, want +2s", w.Elapsed())
	}
	if n := w.RunFor(time.Hour); n != 1 || w.Elapsed() != time.Hour+2*time.Second {
		t.Fatalf("RunFor(1h) ran %d, clock +%s; want 1 and +1h0m2s (time passes on an empty queue)", n, w.Elapsed())
	}
	if w.Step() {
		t.Fatal("Step on an empty queue = true")
	}
}

func TestRunUntil(t *testing.T) {
	w := NewWorld(1)
	count := 0
	var tick func()
	tick = func() { count++; w.After(time.Second, "tick", tick) }
	w.After(time.Second, "tick", tick)

	if !w.RunUntil(func() bool { return count == 5 }, time.Minute) || w.Elapsed() != 5*time.Second {
		t.Fatalf("RunUntil(count==5): clock +%s count %d; want +5s, 5", w.Elapsed(), count)
	}
	if !w.RunUntil(func() bool { return true }, time.Minute) || w.Elapsed() != 5*time.Second {
		t.Fatal("a condition that already holds must not run anything")
	}
	if w.RunUntil(func() bool { return count == 1000 }, 10*time.Second) {
		t.Fatal("RunUntil reported a condition that did not hold")
	}
	if w.Elapsed() != 15*time.Second || count != 15 {
		t.Fatalf("after the limit: clock +%s count %d; want +15s, 15", w.Elapsed(), count)
	}
	quiet := NewWorld(1)
	deadline := quiet.Now().Add(time.Minute)
	if !quiet.RunUntil(func() bool { return !quiet.Now().Before(deadline) }, time.Minute) {
		t.Fatal("a condition on Now that holds at the limit must be seen even with an empty queue")
	}
}

func TestEventBudgetPanicsWithSeedAndReplay(t *testing.T) {
	w := NewWorld(42, WithEventBudget(100), WithScenario("wordpress/failover"))
	var spin func()
	spin = func() { w.After(0, "spin", spin) } // a livelock: time never moves
	w.After(time.Second, "spin", spin)
	f := mustFail(t, func() { w.RunFor(time.Minute) })
	if w.EventsRun() != 100 || f.Event != "spin" || f.At != time.Second {
		t.Fatalf("ran %d events, failure at %q +%s; want 100, spin, +1s", w.EventsRun(), f.Event, f.At)
	}
	for _, want := range []string{"seed 42", "event budget of 100 events exhausted",
		"replay: batonctl sim run --scenario wordpress/failover --seed 42"} {
		if !strings.Contains(f.Error(), want) {
			t.Errorf("%q lacks %q", f.Error(), want)
		}
	}
	unnamed := NewWorld(5, WithEventBudget(1))
	unnamed.After(0, "a", func() {})
	unnamed.After(0, "b", func() {})
	panictest.Containing(t, "--scenario <scenario> --seed 5", func() { unnamed.RunFor(0) })
}

func TestSchedulingMistakesPanic(t *testing.T) {
	w := NewWorld(1)
	panictest.Containing(t, "in the past", func() { w.After(-time.Nanosecond, "x", func() {}) })
	panictest.Containing(t, "needs a label", func() { w.After(0, "", func() {}) })
	panictest.Containing(t, "needs a label", func() { w.After(0, "x", nil) })
	panictest.Containing(t, "negative run limit", func() { w.RunFor(-1) })
	w.RunFor(time.Nanosecond)
	panictest.Containing(t, "overflows", func() { w.After(time.Duration(1<<63-1), "x", func() {}) })
	panictest.Containing(t, "overflows", func() { w.RunFor(time.Duration(1<<63 - 1)) })
	nested := NewWorld(1)
	nested.After(0, "outer", func() { nested.RunFor(time.Second) })
	panictest.Containing(t, `RunFor called from inside event "outer"`, func() { nested.Step() })
}
