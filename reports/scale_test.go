package reports

import (
	"testing"
	"time"
)

func TestTimeTicks(t *testing.T) {
	for _, tc := range []struct {
		span  time.Duration
		step  time.Duration
		count int
	}{
		{5*time.Minute + 12*time.Second, 30 * time.Second, 11},
		{11 * time.Minute, time.Minute, 12},
		{8 * time.Hour, time.Hour, 9},
		{300 * time.Millisecond, 50 * time.Millisecond, 7},
		{90 * 24 * time.Hour, 24 * time.Hour, maxTicks + 2}, // beyond the last step: capped
	} {
		ticks := timeTicks(tc.span)
		if len(ticks) != tc.count || (len(ticks) > 1 && ticks[1] != tc.step) || ticks[0] != 0 {
			t.Errorf("timeTicks(%v) = %v; want %d ticks %v apart", tc.span, ticks, tc.count, tc.step)
		}
	}
}

func TestNiceCeilings(t *testing.T) {
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 28.5: 50, 33.3: 50, 101: 200, 7e5: 1e6} {
		if got := niceCeiling(v); got != want {
			t.Errorf("niceCeiling(%v) = %v, want %v", v, got, want)
		}
	}
	for n, want := range map[uint64]float64{0: 1, 1000: 1000, 48 << 20: 50 << 20, 8 << 30: 10 << 30} {
		if got := niceBytesCeiling(n); got != want {
			t.Errorf("niceBytesCeiling(%d) = %v, want %v", n, got, want)
		}
	}
}
