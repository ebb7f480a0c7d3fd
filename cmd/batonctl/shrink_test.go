package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/scenarios"
)

func writeFaults(t *testing.T, schedule scenarios.Schedule) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "faults.json")
	if err := scenarios.WriteSchedule(file, schedule); err != nil {
		t.Fatal(err)
	}
	return file
}

// A schedule the run cannot honour is refused before any bed is made: a
// class the bed cannot make (the local bed fills no pool), another
// scenario's schedule, a schedule beside --chaos, one schedule for two
// scenarios, and a fault missing what its kind needs.
func TestScenarioRunRefusesSchedulesItCannotRun(t *testing.T) {
	full := writeFaults(t, scenarios.Schedule{Scenario: "wordpress/relocate", Seed: 3, Faults: []scenarios.Fault{
		{At: 1, Kind: scenarios.FaultDiskFull, Target: "site-a", Node: "node-1", Duration: scenarios.Span(time.Minute)}}})
	broken := writeFaults(t, scenarios.Schedule{Faults: []scenarios.Fault{
		{At: 1, Kind: scenarios.FaultPartition, Target: "hub", Duration: scenarios.Span(time.Minute)}}})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"wordpress/relocate", "--bed", "local", "--faults", full},
			"needs disk-full: chaos: a full pool: not supported on this bed (the local bed)"},
		{[]string{"gitea/relocate", "--faults", full}, "is a schedule of wordpress/relocate, not of gitea/relocate"},
		{[]string{"wordpress/relocate", "--chaos", "--faults", full}, "--faults and --chaos"},
		{[]string{"wordpress/relocate", "gitea/relocate", "--faults", full}, "a schedule is one scenario's, and 2 are named"},
		{[]string{"wordpress/relocate", "--faults", broken}, `fault 0: a partition of hub from ""`},
	} {
		_, err := runBatonctl(t, time.Now(), append([]string{"scenario", "run"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("scenario run %v: %v, want %q", c.args, err, c.want)
		}
	}
}

// scenario run --faults runs the schedule on the simulation, with the seed
// the file names when --seed is not given.
func TestScenarioRunReplaysAScheduleFile(t *testing.T) {
	file := writeFaults(t, scenarios.Schedule{Scenario: "wordpress/relocate", Seed: 3, Faults: []scenarios.Fault{
		{At: 1, Kind: scenarios.FaultOperatorCrash, Target: "site-b", Duration: scenarios.Span(40 * time.Second)}}})
	out, err := runBatonctl(t, time.Now(), "scenario", "run", "wordpress/relocate", "--faults", file)
	if err != nil {
		t.Fatalf("scenario run --faults: %v\n%s", err, out)
	}
	if !strings.Contains(out, "wordpress/relocate seed 3: PASSED") {
		t.Errorf("scenario run --faults printed %q, want a pass of seed 3", firstLine(out))
	}
}

// A shrink of a seed whose chaos run passes says so and fails; a shrink on
// another bed than the simulation is refused.
func TestChaosShrinkOfAPassingSeedFails(t *testing.T) {
	_, err := runBatonctl(t, time.Now(), "chaos", "shrink", "--scenario", "wordpress/relocate", "--seed", "1",
		"--out", filepath.Join(t.TempDir(), "faults.json"))
	if err == nil || !strings.Contains(err.Error(), "the run passes") {
		t.Errorf("chaos shrink of a passing seed: %v, want it to say the run passes", err)
	}
	_, err = runBatonctl(t, time.Now(), "chaos", "shrink", "--scenario", "wordpress/relocate", "--seed", "1", "--bed", "real")
	if err == nil || !strings.Contains(err.Error(), "a shrink re-runs on the simulation") {
		t.Errorf("chaos shrink --bed real: %v, want it refused", err)
	}
}
