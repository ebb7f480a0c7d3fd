package scenarios_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	"github.com/baton-dr/baton/sweep"
)

// The catalogue as Ginkgo specs on the simulation bed: every scenario over
// BATON_SEEDS seeds (default 3), with and without partitions injected at its
// phase boundaries. Sweeps of thousands of seeds run through batonctl sim sweep
// (make sim); these specs are the gate every change passes.
func TestScenarios(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "scenarios on the simulation bed")
}

func seeds() int {
	if n, err := strconv.Atoi(os.Getenv("BATON_SEEDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

var _ = Describe("the scenario catalogue", func() {
	for _, sc := range scenarios.Catalogue() {
		Describe(sc.Name, func() {
			for seed := uint64(1); seed <= uint64(seeds()); seed++ {
				for _, chaos := range []bool{false, true} {
					It(fmt.Sprintf("passes on seed %d (chaos %v)", seed, chaos), func() {
						r := sweep.One(sc, seed, chaos)
						Expect(r.Verdict).To(Equal(reports.Passed), explain(r))
					})
				}
			}
		})
	}
})

// regressions are seeds a chaos hunt or a sweep once failed, with what they taught. They
// replay exactly only against the code of their day, but keep the paths they
// found under test.
var regressions = []struct {
	scenario string
	seed     uint64
	chaos    bool
	lesson   string
}{
	{"gitea/relocate", 10172, true, "a clone's only full replica crashed while the other resynced: never promote a resyncing replica"},
	{"gitea/moves", 10172, true, "the same crash: a Secondary cut off from its primary is not snapshotted"},
	{"gitea/failover", 10187, true, "the same split, in the fail-back relocation"},
	{"wordpress/moves", 40011, true, "the pod's node crashed and came back behind: a fenced member's replica must resync before its zvol turns read-only"},
	{"gitea/moves", 40011, true, "the same, with Gitea's volumes"},
	{"gitea/failover", 50086, true, "the home node crashed as Primary and resynced its activity log: csums-alg keeps the identical blocks out of the fail-back delta"},
	{"wordpress/failover", 50086, true, "the same, with WordPress's volumes"},
	{"hub/deploy", 30029, true, "API errors on a site: a view the agent failed to read must not send an Online request back to Discovering"},
	{"hub/deploy", 30080, true, "the same, from Drafted"},
	{"wordpress/failover", 30285, true, "a snapshot's recovery point is when it was ordered, not when its report arrived (storage API errors delayed it)"},
	{"gitea/failover", 30295, true, "the same: a late report must not make a snapshot count as newer than it is"},
	{"wordpress/failover", 30011, true, "a peer whose zvol refused writes (read-only under a tail writer) must miss them under one generation, not one per write (sim/drbd model error)"},
	{"gitea/moves", 80012, true, "a full pool detached the Primary's only UpToDate disk during an initial sync: the application cannot start until the disk is attached again, and nothing it acknowledged is lost"},
	{"gitea/moves", 80005, true, "the same, on the other site after a move"},
	{"wordpress/moves", 11, false, "seeds that vary their timing: a relocation's new member cut off before its first shipment left its old site no replica record, and the fail-over back was refused for ever"},
	{"gitea/moves", 68, false, "the same, with Gitea's volumes"},
}

var _ = Describe("seeds the chaos hunt once failed", func() {
	for _, r := range regressions {
		It(fmt.Sprintf("%s seed %d chaos %v (%s)", r.scenario, r.seed, r.chaos, r.lesson), func() {
			sc, err := scenarios.Find(r.scenario)
			Expect(err).NotTo(HaveOccurred())
			result := sweep.One(sc, r.seed, r.chaos)
			Expect(result.Verdict).To(Equal(reports.Passed), explain(result))
		})
	}
})

// The same stories with every site's records in CRDs, through the site
// operator's CRD-backed store over a per-site fake API server: what the sweeps
// keep in memory for speed, the operator keeps in Kubernetes objects.
var _ = Describe("the scenario catalogue on CRD-backed records", func() {
	for _, name := range []string{"wordpress/failover"} {
		It(name+" passes on seed 1 (chaos true)", func() {
			sc, err := scenarios.Find(name)
			Expect(err).NotTo(HaveOccurred())
			w, err := bedsim.New(bedsim.Options{Seed: 1, Scenario: name, Records: bedsim.CRDRecords})
			Expect(err).NotTo(HaveOccurred())
			r := sc.Run(w, scenarios.Options{Seed: 1, Chaos: true, Replay: sweep.Replay(name, 1, true)})
			Expect(r.Verdict).To(Equal(reports.Passed), explain(r))
		})
	}
})

// explain is what a failed spec prints: the phases, the violations and the
// command that replays the run.
func explain(r reports.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s seed %d %s\n", r.Scenario, r.Seed, r.Verdict)
	for _, p := range r.Phases {
		fmt.Fprintf(&b, "  phase %-40s ok=%v %s\n", p.Name, p.OK, p.Note)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "  violation (%s): %s\n", v.Invariant, v.Message)
	}
	fmt.Fprintf(&b, "  replay: %s\n", r.Replay)
	return b.String()
}
