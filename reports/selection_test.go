package reports

import (
	"fmt"
	"testing"
	"time"
)

func TestSelectDetails(t *testing.T) {
	var results []Result
	// Scenario "a": 60 failures (seeds 1-60) then passes; scenario "b":
	// 3 failures among passes. Round-robin keeps b's failures in.
	for seed := uint64(1); seed <= 100; seed++ {
		verdict := Passed
		if seed <= 60 {
			verdict = Failed
		}
		results = append(results, Result{Scenario: "a", Seed: seed, Verdict: verdict})
	}
	for seed := uint64(1); seed <= 10; seed++ {
		verdict := Passed
		if seed%3 == 0 {
			verdict = Errored
		}
		rpo := time.Duration(seed%4) * time.Second // seed 3 and 7 have the worst RPO; 3 errored
		results = append(results, Result{Scenario: "b", Seed: seed, Verdict: verdict, Failovers: []Failover{{RPO: rpo}}})
	}
	sorted := sortedResults(results)
	chosen, leftOut := selectDetails(sorted)
	var got []string
	counts := map[string]int{}
	for _, d := range chosen {
		r := sorted[d.index]
		counts[r.Scenario+" "+string(r.Verdict)]++
		if d.why != "" {
			got = append(got, fmt.Sprintf("%s/%d %s", r.Scenario, r.Seed, d.why))
		}
	}
	if counts["b errored"] != 3 || counts["a failed"] != detailFailuresMax-3 || leftOut != 63-detailFailuresMax {
		t.Errorf("chosen %v, %d left out", counts, leftOut)
	}
	want := []string{"a/61 sample: lowest passed seed", "b/1 sample: lowest passed seed", "b/7 sample: worst RPO of the passed seeds"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("samples %v, want %v", got, want)
	}
	for i := 1; i < len(chosen); i++ {
		if chosen[i-1].why == "" && chosen[i].why == "" && chosen[i-1].index > chosen[i].index {
			t.Errorf("failures out of order at %d", i)
		}
	}
	if chosen[len(chosen)-1].why == "" {
		t.Error("samples must follow the failures")
	}
}
