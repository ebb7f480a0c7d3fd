package scenarios_test

import (
	"fmt"
	"testing"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
)

func runOnSim(t *testing.T, name string, seed uint64, chaos bool) reports.Result {
	t.Helper()
	sc, err := scenarios.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := bedsim.New(bedsim.Options{Seed: seed, Scenario: name})
	if err != nil {
		t.Fatal(err)
	}
	return sc.Run(w, scenarios.Options{Seed: seed, Chaos: chaos,
		Replay: fmt.Sprintf("batonctl sim run --scenario %s --seed %d", name, seed)})
}

func TestEveryScenarioPassesOnTheSimulation(t *testing.T) {
	for _, sc := range scenarios.Catalogue() {
		t.Run(sc.Name, func(t *testing.T) {
			r := runOnSim(t, sc.Name, 1, false)
			if r.Verdict != reports.Passed {
				for _, p := range r.Phases {
					t.Logf("phase %-40s ok=%v %s", p.Name, p.OK, p.Note)
				}
				for _, v := range r.Violations {
					t.Logf("violation %s: %s", v.Invariant, v.Message)
				}
				t.Fatalf("%s seed 1: %s (replay: %s)", sc.Name, r.Verdict, r.Replay)
			}
		})
	}
}
