package workload

import (
	"testing"
	"time"
)

// The RPO is measured from the failure back to the recovery point the
// surviving copy holds; the verdict's time does not enter it.
func TestRPOIsFromTheFailureToTheRecoveryPoint(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	failure := t0.Add(time.Minute)
	lost := func(oldest time.Time) LostWrites {
		return LostWrites{Acknowledged: 3, AcknowledgedBytes: 3 * BlockSizeBytes, Oldest: oldest}
	}
	for _, tc := range []struct {
		name  string
		v     VolumeVerdict
		point time.Time // zero: no recovery point
		rpo   time.Duration
	}{
		{name: "nothing lost", v: VolumeVerdict{Prefix: Prefix{Seq: 9, Writes: 9, At: t0}}},
		{name: "a busy volume: back to the first write it lost",
			v:     VolumeVerdict{Prefix: Prefix{Seq: 9, Writes: 9, At: t0.Add(40 * time.Second)}, Lost: lost(t0.Add(41 * time.Second))},
			point: t0.Add(41 * time.Second), rpo: 19 * time.Second},
		{name: "an idle volume: its idle span before the loss is not lost",
			v:     VolumeVerdict{Prefix: Prefix{Seq: 9, Writes: 9, At: t0.Add(-time.Hour)}, Lost: lost(t0.Add(50 * time.Second))},
			point: t0.Add(50 * time.Second), rpo: 10 * time.Second},
		{name: "the empty prefix",
			v:     VolumeVerdict{Lost: lost(t0.Add(30 * time.Second))},
			point: t0.Add(30 * time.Second), rpo: 30 * time.Second},
		{name: "only writes after the failure lost",
			v:     VolumeVerdict{Prefix: Prefix{Seq: 9, Writes: 9, At: t0.Add(20 * time.Second)}, Lost: lost(t0.Add(71 * time.Second))},
			point: t0.Add(71 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			point, ok := tc.v.RecoveryPoint()
			if ok != !tc.point.IsZero() || !point.Equal(tc.point) {
				t.Errorf("recovery point %s (%v), want %s", point, ok, tc.point)
			}
			if got := tc.v.RPO(failure); got != tc.rpo {
				t.Errorf("RPO %s, want %s", got, tc.rpo)
			}
		})
	}
}
