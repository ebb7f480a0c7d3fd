package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/bed"
	bedsim "github.com/baton-dr/baton/bed/sim"
	"github.com/baton-dr/baton/reports"
)

// protectedApp is a simulated world running WordPress ("wp") on site-a,
// protected.
func protectedApp(t *testing.T, options bedsim.Options) *bedsim.World {
	t.Helper()
	w, err := bedsim.New(options)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Deploy(bed.App{Name: "wp", Kind: bed.WordPress, Site: "site-a"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Protect("wp"); err != nil {
		t.Fatal(err)
	}
	return w
}

func noViolations(t *testing.T, w *bedsim.World) {
	t.Helper()
	for _, v := range w.Violations() {
		t.Errorf("violation (%s): %s", v.Invariant, v.Message)
	}
}

// relocatesLosingNothing relocates wp to site-b: the move must keep every
// acknowledged write, and the run must have broken no invariant.
func relocatesLosingNothing(t *testing.T, w *bedsim.World, after string) {
	t.Helper()
	v, err := w.Relocate("wp", "site-b")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Consistent() || v.LostAcknowledged() > 0 {
		t.Fatalf("relocated %s: %s", after, v.String())
	}
	noViolations(t, w)
}

func timelineHas(w *bedsim.World, kind reports.EventKind, words string) bool {
	for _, e := range w.Timeline() {
		if e.Kind == kind && strings.Contains(e.Detail, words) {
			return true
		}
	}
	return false
}

// TestAFullPoolUnderThePodDetachesItsDiskAndLosesNothing fills the pool
// under the application's pod. DRBD detaches the disk that refuses (as real
// DRBD 8.4 does: ci/vmtest TestFullPoolUnderThePrimary) and the application
// writes on through the replica on the other node; no snapshot is taken of
// the Diskless home, so replication waits. Once the pool is freed the agent
// attaches the disk again, DRBD resyncs it, replication catches up, and a
// planned relocation loses no acknowledged write.
func TestAFullPoolUnderThePodDetachesItsDiskAndLosesNothing(t *testing.T) {
	w := protectedApp(t, bedsim.Options{Seed: 7, Scenario: "test/disk-full"})
	node, err := w.Pod("wp")
	if err != nil {
		t.Fatal(err)
	}
	w.FillPool("site-a", node)
	w.Run(2 * time.Minute)
	if timelineHas(w, reports.EventDiskFull, "a write failed on the full pool") {
		t.Fatal("a write failed although the replica on the other node took it")
	}
	w.FreePool("site-a", node)
	w.Run(2 * time.Minute)
	relocatesLosingNothing(t, w, "after a full pool")
}

// fillSitePools fills the pool of every node of site.
func fillSitePools(w *bedsim.World, site string) {
	for _, node := range w.Nodes(site) {
		w.FillPool(site, node)
	}
}

// freeSitePools frees the pool of every node of site.
func freeSitePools(w *bedsim.World, site string) {
	for _, node := range w.Nodes(site) {
		w.FreePool(site, node)
	}
}

// TestFullPoolsStopTheApplicationAndLoseNothingAcknowledged fills the pools
// of every node of the application's site: no disk takes its writes, it
// stops and restarts over what its volumes hold, and once the pools are
// freed it writes again and a planned relocation loses no acknowledged
// write.
func TestFullPoolsStopTheApplicationAndLoseNothingAcknowledged(t *testing.T) {
	w := protectedApp(t, bedsim.Options{Seed: 7, Scenario: "test/disk-full-site"})
	fillSitePools(w, "site-a")
	w.Run(2 * time.Minute)
	if !timelineHas(w, reports.EventDiskFull, "a write failed on the full pool") {
		t.Fatal("the application wrote through two minutes of full pools")
	}
	if !timelineHas(w, reports.EventAction, "wp restarts") {
		t.Fatal("the application never restarted after its write failed")
	}
	freeSitePools(w, "site-a")
	w.Run(2 * time.Minute)
	relocatesLosingNothing(t, w, "after full pools")
}

// TestAFullReplicaPoolHoldsReplicationBackUntilFreed fills a pool of the
// replica site: receives are refused there, and replication catches up once
// the space is back.
func TestAFullReplicaPoolHoldsReplicationBackUntilFreed(t *testing.T) {
	w := protectedApp(t, bedsim.Options{Seed: 8, Scenario: "test/disk-full-replica"})
	fillSitePools(w, "site-b")
	w.Run(3 * time.Minute)
	freeSitePools(w, "site-b")
	w.Run(3 * time.Minute)
	relocatesLosingNothing(t, w, "after a full replica pool")
}

// TestAPIErrorsAreRetriedAndLoseNothing fails a third of the calls to both
// sites' storage APIs and API servers (CRD records) and the hub's for three
// minutes while the protected application writes and ships, then a tenth of
// them through a relocation: every caller retries through them, the move
// loses nothing and the chains stay valid.
func TestAPIErrorsAreRetriedAndLoseNothing(t *testing.T) {
	w := protectedApp(t, bedsim.Options{Seed: 9, Scenario: "test/api-errors", Records: bedsim.CRDRecords})
	endpoints := []string{"hub", "site-a", "site-b"}
	for _, endpoint := range endpoints {
		w.FailAPI(endpoint, 0.3)
	}
	w.Run(3 * time.Minute)
	for _, endpoint := range endpoints {
		w.HealAPI(endpoint)
		w.FailAPI(endpoint, 0.1)
	}
	v, err := w.Relocate("wp", "site-b")
	if err != nil {
		t.Fatal(err)
	}
	for _, endpoint := range endpoints {
		w.HealAPI(endpoint)
	}
	if !v.Consistent() || v.LostAcknowledged() > 0 {
		t.Fatalf("relocated through API errors: %s", v.String())
	}
	if !timelineHas(w, reports.EventAPIError, "fail 30% of calls") {
		t.Fatal("no API-errors event on the timeline")
	}
	chains, err := w.Chains()
	if err != nil {
		t.Fatal(err)
	}
	if len(chains) != 2 {
		t.Fatalf("%d chains, want the application's two", len(chains))
	}
	noViolations(t, w)
}
