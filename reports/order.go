package reports

import (
	"cmp"
	"slices"
	"time"
)

// sortedResults returns the results ordered by scenario, then seed. Beds
// finish results in whatever order their workers do; every renderer reads
// them in this order so that the same set of results gives the same bytes.
// Results with equal scenario and seed keep their relative order.
func sortedResults(results []Result) []Result {
	sorted := slices.Clone(results)
	slices.SortStableFunc(sorted, func(x, y Result) int {
		return cmp.Or(cmp.Compare(x.Scenario, y.Scenario), cmp.Compare(x.Seed, y.Seed))
	})
	return sorted
}

// scenarioSummary counts one scenario's results.
type scenarioSummary struct {
	Scenario      string
	Results       int
	Passed        int
	Failed        int
	Errored       int
	SeedFirst     uint64
	SeedLast      uint64
	FailingSeeds  []uint64 // failed and errored, ascending
	WorstRPO      time.Duration
	WorstRTO      time.Duration
	LostWrites    int // by planned relocations, which must lose none
	ShippedBytes  uint64
	ChangedBytes  uint64
	Syncs         int // recorded; a bed that records none did not measure the bytes
	ViolationsAll int
}

// summarize counts the results (which must be sorted) per scenario, in
// scenario order.
func summarize(sorted []Result) []scenarioSummary {
	var summaries []scenarioSummary
	for i, result := range sorted {
		if i == 0 || sorted[i-1].Scenario != result.Scenario {
			summaries = append(summaries, scenarioSummary{Scenario: result.Scenario, SeedFirst: result.Seed})
		}
		summary := &summaries[len(summaries)-1]
		summary.Results++
		summary.SeedLast = result.Seed
		switch result.Verdict {
		case Passed:
			summary.Passed++
		case Failed:
			summary.Failed++
		default:
			summary.Errored++
		}
		if result.Verdict != Passed {
			summary.FailingSeeds = append(summary.FailingSeeds, result.Seed)
		}
		summary.WorstRPO = max(summary.WorstRPO, worstRPO(result))
		summary.WorstRTO = max(summary.WorstRTO, worstRTO(result))
		summary.LostWrites += plannedLostWrites(result)
		shipped, changed := syncTotals(result)
		summary.ShippedBytes += shipped
		summary.ChangedBytes += changed
		summary.Syncs += len(result.Syncs)
		summary.ViolationsAll += len(result.Violations)
	}
	return summaries
}

// totals counts verdicts over all results.
type totals struct {
	Results, Passed, Failed, Errored int
}

func countVerdicts(results []Result) totals {
	var t totals
	for _, result := range results {
		t.Results++
		switch result.Verdict {
		case Passed:
			t.Passed++
		case Failed:
			t.Failed++
		default:
			t.Errored++
		}
	}
	return t
}

// worstRPO is the largest RPO of a result's fail-overs.
func worstRPO(result Result) time.Duration {
	var worst time.Duration
	for _, failover := range result.Failovers {
		worst = max(worst, failover.RPO)
	}
	return worst
}

// worstRTO is the longest RTO of a result's fail-overs.
func worstRTO(result Result) time.Duration {
	var worst time.Duration
	for _, failover := range result.Failovers {
		worst = max(worst, failover.RTO)
	}
	return worst
}

// plannedLostWrites counts the writes planned relocations lost; any is a bug.
func plannedLostWrites(result Result) int {
	lost := 0
	for _, failover := range result.Failovers {
		if failover.Planned {
			lost += failover.LostWrites
		}
	}
	return lost
}

// syncTotals adds up a result's bytes shipped and changed over every sync.
func syncTotals(result Result) (shipped, changed uint64) {
	for _, sync := range result.Syncs {
		shipped += sync.BytesShipped
		changed += sync.BytesChanged
	}
	return shipped, changed
}

// offset is how long after the result's start t happened. A result without
// a recorded start measures from its first timeline event.
func offset(result Result, t time.Time) time.Duration {
	return t.Sub(origin(result))
}

// origin is the instant offsets count from.
func origin(result Result) time.Time {
	if !result.Started.IsZero() || len(result.Timeline) == 0 {
		return result.Started
	}
	return result.Timeline[0].At
}

// milliseconds expresses d in milliseconds, for results.json.
func milliseconds(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}
