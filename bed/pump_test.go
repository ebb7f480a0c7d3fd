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
