package bed

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A round's results reach record only through the function its channel
// yields, each with its own call's, and every call ran under the limit.
func TestStartRoundRecordsEachCallsResultWhenAllReturned(t *testing.T) {
	if StartRound([]int{}, time.Second, func(context.Context, int) int { return 0 }, func(int, int) {}) != nil {
		t.Fatal("a round of no calls is not nil")
	}
	limit := time.Hour
	recorded := map[int]int{}
	round := StartRound([]int{1, 2, 3}, limit, func(ctx context.Context, c int) int {
		if deadline, ok := ctx.Deadline(); !ok || time.Until(deadline) > limit {
			t.Errorf("call %d ran without the limit (%v, %v)", c, deadline, ok)
		}
		return c * 10
	}, func(c, r int) { recorded[c] = r })
	finish := <-round
	if len(recorded) != 0 {
		t.Fatalf("recorded %v before the round's function ran", recorded)
	}
	finish()
	if want := map[int]int{1: 10, 2: 20, 3: 30}; len(recorded) != 3 || recorded[1] != want[1] || recorded[2] != want[2] || recorded[3] != want[3] {
		t.Errorf("recorded %v, want %v", recorded, want)
	}
}

// The pump asks done only between rounds, finishes a round it started,
// and tells whether done held.
func TestWallPumpAsksDoneBetweenRoundsOnly(t *testing.T) {
	var events []string
	inRound := false
	steps := 0
	p := WallPump{
		Step: func() { steps++ },
		Tick: func(time.Time) {},
		Round: func() <-chan func() {
			inRound = true
			events = append(events, "round")
			ch := make(chan func(), 1)
			ch <- func() { inRound = false; events = append(events, "finished") }
			return ch
		},
	}
	done := func() bool {
		if inRound {
			t.Error("done asked during a round")
		}
		events = append(events, "done?")
		return len(events) > 6
	}
	if !p.Run(done, time.Hour) {
		t.Fatal("Run returned false though done held")
	}
	if want := []string{"done?", "round", "finished", "done?", "round", "finished", "done?"}; !slices.Equal(events, want) {
		t.Errorf("events %v, want %v", events, want)
	}
	if steps == 0 {
		t.Error("the applications never stepped")
	}
	if p.Run(func() bool { return false }, 0) {
		t.Error("Run past its limit returned true though done never held")
	}
}

// A wait held up beside the bed (the cuts of a run beside it) does not time
// out while held, and the hold is told once it lifted: with no time of its
// own left (limit 0) the wait still sees done hold after the lift.
func TestAWaitHeldBesideDoesNotTimeOutWhileHeld(t *testing.T) {
	looks, lifted := 0, false
	var waited []string
	p := WallPump{
		Step:  func() {},
		Tick:  func(time.Time) {},
		Round: func() <-chan func() { return nil },
		Held: func() string {
			looks++
			if looks <= 3 {
				return "the cut beside"
			}
			lifted = true
			return ""
		},
		Waited: func(what string, d time.Duration) { waited = append(waited, what) },
	}
	if !p.Run(func() bool { return lifted }, 0) {
		t.Fatalf("the wait timed out while the bed beside held it (looks %d)", looks)
	}
	if !slices.Equal(waited, []string{"the cut beside"}) {
		t.Errorf("waited told %v, want the one hold", waited)
	}
	// A run of the scenario's time (no done) is no wait: it is not held.
	looks = 0
	p.Run(nil, 0)
	if looks != 0 {
		t.Errorf("Run(nil) asked Held %d times", looks)
	}
}

// A hold lengthens the wait by exactly its span, a change of what holds it
// goes on as one hold, and HoldCeiling caps what holds add in all.
func TestAHoldLengthensTheDeadlineByItsSpan(t *testing.T) {
	start := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	deadline := at(240)
	var h holding
	var told []time.Duration
	waited := func(_ string, d time.Duration) { told = append(told, d) }
	for _, look := range []struct {
		s    int
		what string
	}{{5, ""}, {10, "site-a->hub"}, {40, "site-a->hub, site-a->site-b"}, {70, ""}, {80, ""}} {
		deadline = h.look(at(look.s), look.what, deadline, waited)
		if look.what != "" && !h.holds(at(look.s)) {
			t.Errorf("at %d s: held by %q but not holding", look.s, look.what)
		}
	}
	if want := at(300); !deadline.Equal(want) {
		t.Errorf("deadline %s, want %s (240 s and the 60 s held)", deadline.Sub(start), want.Sub(start))
	}
	if !slices.Equal(told, []time.Duration{60 * time.Second}) {
		t.Errorf("holds told %v, want one of 60 s", told)
	}
	h.look(at(100), "the cut beside", deadline, waited)
	if h.holds(at(100).Add(HoldCeiling)) {
		t.Error("a hold past the ceiling still holds the wait")
	}
	if got := h.end(at(100).Add(2*HoldCeiling), waited); got != HoldCeiling-60*time.Second {
		t.Errorf("a hold past the ceiling lengthened the wait by %s, want what the ceiling left (%s)", got, HoldCeiling-60*time.Second)
	}
}
