// Package reportstest builds realistic runs for the renderers' tests, golden
// files and benchmarks: two sites and a hub, WordPress and Gitea fail-overs
// with partitions and diverged tails, twelve relocations growing thirteen-
// member chains, and a failed seed whose violations carry their event
// windows. Everything is derived from the seed: the same arguments give the
// same run.
package reportstest

import (
	"time"

	"github.com/baton-dr/baton/reports"
)

// SampleFailedSeed is the seed of wordpress/failover that fails in SampleRun.
const SampleFailedSeed = 3

// SampleErroredSeed is the seed of gitea/failover whose bed errors in
// SampleRun.
const SampleErroredSeed = 2

// SampleRun is a small sweep: wordpress/failover on seeds 1-5 (seed 3 fails
// with two violations), wordpress/twelve-moves on seeds 1-3 and
// gitea/failover on seeds 1-3 (seed 2's bed errors). The results are listed
// in the order a parallel sweep might finish them, not sorted.
func SampleRun() reports.Run {
	run := reports.Run{
		Name:     "sim sweep",
		Bed:      "sim",
		Commit:   "e509a82",
		Started:  time.Date(2026, time.November, 30, 2, 0, 0, 0, time.UTC),
		Duration: 3*time.Minute + 12*time.Second,
	}
	for seed := uint64(3); seed >= 1; seed-- {
		run.Results = append(run.Results, movesResult(wordpress, seed, 12))
	}
	for seed := uint64(1); seed <= 5; seed++ {
		run.Results = append(run.Results, failoverResult(wordpress, seed, seed == SampleFailedSeed))
	}
	for seed := uint64(1); seed <= 3; seed++ {
		if seed == SampleErroredSeed {
			run.Results = append(run.Results, erroredResult(gitea, seed))
			continue
		}
		run.Results = append(run.Results, failoverResult(gitea, seed, false))
	}
	return run
}

// LargeRun is a sweep of n results over three scenarios, as `make sim
// SEEDS=...` produces: about one wordpress/failover seed in twenty-five
// fails, about one gitea/failover seed in forty errors.
func LargeRun(n int) reports.Run {
	run := reports.Run{
		Name:     "nightly sim sweep",
		Bed:      "sim",
		Commit:   "e509a82",
		Started:  time.Date(2026, time.November, 30, 2, 0, 0, 0, time.UTC),
		Duration: 41 * time.Minute,
	}
	for i := range n {
		seed := uint64(i/3 + 1)
		switch i % 3 {
		case 0:
			run.Results = append(run.Results, failoverResult(wordpress, seed, seed%25 == 7))
		case 1:
			run.Results = append(run.Results, movesResult(gitea, seed, 12))
		default:
			if seed%40 == 11 {
				run.Results = append(run.Results, erroredResult(gitea, seed))
				continue
			}
			run.Results = append(run.Results, failoverResult(gitea, seed, false))
		}
	}
	return run
}

// erroredResult is a run whose bed failed before the scenario could judge
// the system.
func erroredResult(a app, seed uint64) reports.Result {
	b := newBuilder(a.name+"/failover", seed)
	b.phase("deploy", func() (bool, string) {
		b.begin(hub, reports.EventAction, "deploy", "deploy "+a.name+" on site-a")
		b.advance(2 * time.Minute)
		b.event("site-b", reports.EventFault, "kube-apiserver of site-b not ready")
		return false, "bed: site-b's kube-apiserver did not become ready within 2m0s"
	})
	b.result.Verdict = reports.Errored
	b.result.Error = "bed: site-b's kube-apiserver did not become ready within 2m0s"
	return b.finish()
}
