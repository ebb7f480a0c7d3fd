package scenarios_test

import (
	"strings"
	"testing"
	"time"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
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
