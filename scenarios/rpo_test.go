package scenarios_test

import (
	"strings"
	"testing"
	"time"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
	"github.com/baton-dr/baton/workload"
)

// claimedInterval is a test double of the simulation bed's pace: the world
// replicates every minute, while the bed claims a shorter interval.
type claimedInterval struct {
	*bedsim.World
	interval time.Duration
}

func (c claimedInterval) ReplicationInterval() (time.Duration, error) { return c.interval, nil }

// A fail-over that lost writes older than its RPO bound fails: it once
// passed whatever its RPO, which on the local bed was the whole run.
func TestAFailoverBeyondItsRPOBoundFails(t *testing.T) {
	sc, err := scenarios.Find("wordpress/failover")
	if err != nil {
		t.Fatal(err)
	}
	run := func(interval time.Duration) reports.Result {
		w, err := bedsim.New(sweep.BedOptions(sc, 1))
		if err != nil {
			t.Fatal(err)
		}
		return sc.Run(claimedInterval{w, interval}, scenarios.Options{Seed: 1})
	}
	if r := run(time.Minute); r.Verdict != reports.Passed {
		t.Fatalf("at the world's own interval: %s: %s", r.Verdict, r.Error)
	}
	r := run(time.Second)
	if r.Verdict != reports.Failed || !strings.Contains(r.Error, "beyond") && !strings.Contains(r.Error, "the bound allows") {
		t.Fatalf("claiming a 1 s interval: %s (%s), want it failed on the RPO bound", r.Verdict, r.Error)
	}
}

// watchedFailover is the simulation bed with the moments a fail-over's
// figures are measured between taken from outside the scenario: the cut
// (its first partition), and the verdict and the time the application
// served again (Failover's return).
type watchedFailover struct {
	*bedsim.World
	cut, served time.Time
	verdict     workload.Verdict
}

func (w *watchedFailover) Partition(a, b string, bothWays bool) {
	if w.cut.IsZero() {
		w.cut = w.Now()
	}
	w.World.Partition(a, b, bothWays)
}

func (w *watchedFailover) Failover(app, site string) (workload.Verdict, error) {
	v, err := w.World.Failover(app, site)
	w.verdict, w.served = v, w.Now()
	return v, err
}

// A fail-over's RPO runs from the cut back to the recovery point the new
// primary holds (its first lost acknowledged write), and its RTO from the cut until the application serves on
// the new site. Both once ran from elsewhere: the RPO from the verdict
// (the oldest lost write's age at the read-back, so it grew with the
// isolation and the fail-over), the RTO from the fail-over's start.
func TestAFailoverCountsRPOAndRTOFromTheCut(t *testing.T) {
	sc, err := scenarios.Find("wordpress/failover")
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2} {
		w, err := bedsim.New(sweep.BedOptions(sc, seed))
		if err != nil {
			t.Fatal(err)
		}
		watched := &watchedFailover{World: w}
		r := sc.Run(watched, scenarios.Options{Seed: seed})
		if r.Verdict != reports.Passed || watched.cut.IsZero() || watched.served.IsZero() {
			t.Fatalf("seed %d: %s (%s), cut at %s, served at %s", seed, r.Verdict, r.Error, watched.cut, watched.served)
		}
		unplanned := 0
		for _, f := range r.Failovers {
			if f.Planned {
				continue
			}
			vol, ok := watched.verdict.Volume(f.Volume)
			if !ok || vol.Lost.Acknowledged == 0 || !vol.Lost.Oldest.Before(watched.cut) {
				t.Fatalf("seed %d: %s lost nothing before the cut: %+v", seed, f.Volume, vol)
			}
			unplanned++
			rpo, lossAge := watched.cut.Sub(vol.Lost.Oldest), watched.verdict.At.Sub(vol.Lost.Oldest)
			if f.RPO != rpo || f.RPO >= lossAge || f.LossAge != lossAge {
				t.Errorf("seed %d: %s: RPO %s, loss age %s; want the RPO %s from the cut back to the first lost write (%s), "+
					"shorter than the loss age %s at the read-back", seed, f.Volume, f.RPO, f.LossAge, rpo, vol.Lost.Oldest, lossAge)
			}
			if rto := watched.served.Sub(watched.cut); f.RTO != rto {
				t.Errorf("seed %d: %s: RTO %s, want %s from the cut to serving on %s", seed, f.Volume, f.RTO, rto, f.To)
			}
		}
		if unplanned != len(watched.verdict.Volumes) {
			t.Errorf("seed %d: %d unplanned moves recorded for %d volumes", seed, unplanned, len(watched.verdict.Volumes))
		}
	}
}
