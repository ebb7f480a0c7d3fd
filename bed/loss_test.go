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
			{Volume: "db", Lost: workload.LostWrites{Acknowledged: 3, Oldest: oldest, RPO: time.Minute}},
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
		broken, unchecked := MoveLosses("wp", lost(c.oldest), c.planned, origin, at)
		if len(unchecked) > 0 {
			t.Errorf("%s: unchecked %v", c.name, unchecked)
		}
		switch {
		case c.invariant == "" && len(broken) > 0:
			t.Errorf("%s: %+v, want none", c.name, broken)
		case c.invariant != "" && (len(broken) != 1 || broken[0].Invariant != c.invariant || !strings.Contains(broken[0].Message, "db")):
			t.Errorf("%s: %+v, want one %q naming db", c.name, broken, c.invariant)
		}
	}
	broken, unchecked := MoveLosses("wp", lost(ordered.Add(-time.Hour)), false,
		func(int) (time.Time, error) { return time.Time{}, errors.New("no pairing lists it") }, at)
	if len(broken) != 0 || len(unchecked) != 1 || !strings.Contains(unchecked[0].Error(), "no pairing lists it") {
		t.Fatalf("an origin not found: broken %+v, unchecked %v; want it unchecked and said", broken, unchecked)
	}
}
