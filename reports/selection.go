package reports

import (
	"cmp"
	"slices"
)

// What report.html draws in full, so that a sweep of thousands of seeds
// stays a page a browser opens in a second or two:
//
//   - every failed and errored result is listed, with its replay command, in
//     the failures table;
//   - up to detailFailuresMax of them get full detail (timeline, charts,
//     chains, violations with windows, event log), chosen round-robin over
//     the scenarios, lowest seeds first, so one noisy scenario cannot hide
//     another's failure;
//   - per scenario, up to two passed results get full detail as a sample:
//     the one with the worst RPO (how bad it gets while still passing) and
//     the lowest seed (the run everyone replays first);
//   - every other result is a square in its scenario's seed map and a count
//     in the summary; it replays from its seed, and results.json has its
//     measurements.
const (
	detailFailuresMax = 40
	// eventLogMax bounds the event log table of one detailed result; the
	// violation windows are always shown whole.
	eventLogMax = 500
	// openRowsMax is the longest phase or fail-over table shown open; a
	// longer one (twelve moves make 27 phases) starts folded, as the
	// timeline's phase band and the RPO chart already show it.
	openRowsMax = 12
)

// detail is one result chosen for full detail, and why.
type detail struct {
	index int    // into the sorted results
	why   string // for a sample: why this one; empty for a failure
}

// selectDetails picks the results drawn in full from the sorted results, in
// display order -- the failures by scenario and seed, then the passed
// samples by scenario and seed -- and counts the failures left out.
func selectDetails(sorted []Result) (chosen []detail, failuresLeftOut int) {
	var failing [][]int // per scenario, indexes of failed and errored results
	for i, result := range sorted {
		if i == 0 || sorted[i-1].Scenario != result.Scenario {
			failing = append(failing, nil)
		}
		if result.Verdict != Passed {
			failing[len(failing)-1] = append(failing[len(failing)-1], i)
		}
	}
	total := 0
	for _, scenario := range failing {
		total += len(scenario)
	}
	for round := 0; len(chosen) < min(total, detailFailuresMax); round++ {
		for _, scenario := range failing {
			if round < len(scenario) && len(chosen) < detailFailuresMax {
				chosen = append(chosen, detail{index: scenario[round]})
			}
		}
	}
	leftOut := total - len(chosen)
	slices.SortFunc(chosen, func(a, b detail) int { return cmp.Compare(a.index, b.index) })
	// Samples come out of samplePassed in scenario order, two at most per
	// scenario; sorting keeps the lowest seed first within a scenario.
	samples := samplePassed(sorted)
	slices.SortFunc(samples, func(a, b detail) int { return cmp.Compare(a.index, b.index) })
	return append(chosen, samples...), leftOut
}

// Samples are the passed results report.html draws in full as samples --
// per scenario the worst RPO and the lowest seed -- as indexes into
// results, which must be sorted by scenario, then seed (as a sweep returns
// them). A sweep that keeps only failed results' timelines restores these.
func Samples(sorted []Result) []int {
	var out []int
	for _, d := range samplePassed(sorted) {
		out = append(out, d.index)
	}
	return out
}

// samplePassed picks per scenario the passed result with the worst RPO and
// the passed result with the lowest seed (one result when they coincide).
func samplePassed(sorted []Result) []detail {
	var samples []detail
	for start := 0; start < len(sorted); {
		end := start + 1
		for end < len(sorted) && sorted[end].Scenario == sorted[start].Scenario {
			end++
		}
		lowest, worst := -1, -1
		for i := start; i < end; i++ {
			if sorted[i].Verdict != Passed {
				continue
			}
			if lowest < 0 {
				lowest = i
			}
			if worst < 0 || worstRPO(sorted[i]) > worstRPO(sorted[worst]) {
				worst = i
			}
		}
		if lowest >= 0 {
			samples = append(samples, detail{index: lowest, why: "sample: lowest passed seed"})
		}
		if worst >= 0 && worst != lowest {
			samples = append(samples, detail{index: worst, why: "sample: worst RPO of the passed seeds"})
		}
		start = end
	}
	return samples
}
