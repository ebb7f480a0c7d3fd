package bed

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/workload"
)

func TestMoveLossesHoldTheRecoveryPoint(t *testing.T) {
	ordered := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	lost := func(oldest time.Time) workload.Verdict {
		return workload.Verdict{Volumes: []workload.VolumeVerdict{
			{Volume: "db", Lost: workload.LostWrites{Acknowledged: 3, Oldest: oldest, Age: time.Minute}},
			{Volume: "uploads"}, // lost nothing: never looked up
		}}
	}
	origin := func(i int) (time.Time, error) {
		if i != 0 {
			t.Fatalf("origin of volume %d asked: it lost nothing", i)
		}
		return ordered, nil
	}
	at := func(t time.Time) string { return t.Format(time.RFC3339) }
	for _, c := range []struct {
		name      string
		oldest    time.Time
		planned   bool
		invariant string
	}{
		{"a planned move loses nothing", ordered.Add(time.Second), true, "volume: planned move lost acknowledged writes"},
		{"a fail-over loses a write the snapshot carried", ordered.Add(-time.Nanosecond), false, "volume: lost a write the last sync carried"},
		{"a fail-over loses writes after the recovery point", ordered, false, ""},
	} {
		broken := MoveLosses("wp", lost(c.oldest), c.planned, origin, at)
		switch {
		case c.invariant == "" && len(broken) > 0:
			t.Errorf("%s: %+v, want none", c.name, broken)
		case c.invariant != "" && (len(broken) != 1 || broken[0].Invariant != c.invariant || !strings.Contains(broken[0].Message, "db")):
			t.Errorf("%s: %+v, want one %q naming db", c.name, broken, c.invariant)
		}
	}
	// A check that could not run breaks the invariant: the loss may be
	// anything (it was once an event line beside a PASSED verdict).
	broken := MoveLosses("wp", lost(ordered.Add(-time.Hour)), false,
		func(int) (time.Time, error) { return time.Time{}, errors.New("no pairing lists it") }, at)
	if len(broken) != 1 || broken[0].Invariant != InvariantLossUnchecked || !strings.Contains(broken[0].Message, "no pairing lists it") {
		t.Fatalf("an origin not found: %+v; want one %q saying why", broken, InvariantLossUnchecked)
	}
}

func TestRecoveryFloorReachesBackOverFaults(t *testing.T) {
	cut := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	interval := time.Minute
	span := RPOIntervals * interval
	at := func(minutes int) time.Time { return cut.Add(time.Duration(minutes) * time.Minute) }
	for _, c := range []struct {
		name   string
		faults []Window
		want   time.Time
	}{
		{"no fault: k intervals before the cut", nil, cut.Add(-span)},
		{"a fault long over does not count", []Window{{at(-30), at(-20)}}, cut.Add(-span)},
		{"a fault ending just before the cut: from its start", []Window{{at(-3), at(-1)}}, at(-3).Add(-span)},
		{"a fault still on at the cut", []Window{{at(-2), time.Time{}}}, at(-2).Add(-span)},
		{"a fault within the span of the one it moved the floor to", []Window{{at(-3), at(-1)}, {at(-9), at(-6)}}, at(-9).Add(-span)},
		{"a fault after the cut does not count", []Window{{at(1), at(2)}}, cut.Add(-span)},
	} {
		if got := RecoveryFloor(cut, interval, c.faults); !got.Equal(c.want) {
			t.Errorf("%s: floor %s, want %s", c.name, got.Sub(cut), c.want.Sub(cut))
		}
	}
}

func TestLossesBeyondTheFloorBreakTheBound(t *testing.T) {
	cut := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	floor := cut.Add(-4 * time.Minute)
	verdict := workload.Verdict{Volumes: []workload.VolumeVerdict{
		{Volume: "db", Lost: workload.LostWrites{Acknowledged: 9, Oldest: floor.Add(-time.Second), Age: 5 * time.Minute}},
		{Volume: "uploads", Lost: workload.LostWrites{Acknowledged: 2, Oldest: floor}},
		// The newest write it holds is older than the floor, but it was
		// idle until after it: what it lost is within the bound.
		{Volume: "cache", Prefix: workload.Prefix{Seq: 4, Writes: 4, At: floor.Add(-time.Hour)},
			Lost: workload.LostWrites{Acknowledged: 1, Oldest: floor.Add(time.Second)}},
		{Volume: "logs"},
	}}
	broken := LossesBeyond("wp", verdict, cut, floor, time.Minute)
	if len(broken) != 1 || broken[0].Invariant != InvariantRPOBound || !strings.Contains(broken[0].Message, "of db: RPO 4m1s") {
		t.Fatalf("%+v, want db alone beyond the bound", broken)
	}
}
