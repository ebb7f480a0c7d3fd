package reports_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/reportstest"
)

func decodeResults(t *testing.T, run reports.Run) (reports.JSONFile, []byte) {
	t.Helper()
	var out bytes.Buffer
	if err := reports.WriteJSON(&out, run); err != nil {
		t.Fatal(err)
	}
	var file reports.JSONFile
	decoder := json.NewDecoder(bytes.NewReader(out.Bytes()))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&file); err != nil {
		t.Fatalf("results.json does not decode into JSONFile: %v", err)
	}
	return file, out.Bytes()
}

func TestJSONCarriesWhatToolsNeed(t *testing.T) {
	file, _ := decodeResults(t, reportstest.SampleRun())
	if file.Schema != reports.JSONSchema || file.Run.Bed != "sim" || file.Run.Started != "2026-11-30T02:00:00Z" {
		t.Errorf("header = %q %+v", file.Schema, file.Run)
	}
	if file.Totals != (reports.JSONTotals{Results: 11, Passed: 9, Failed: 1, Errored: 1}) {
		t.Errorf("totals = %+v", file.Totals)
	}
	failing := map[string][]uint64{}
	for _, s := range file.Scenarios {
		failing[s.Scenario] = s.FailingSeeds
	}
	if !slices.Equal(failing["wordpress/failover"], []uint64{3}) || !slices.Equal(failing["gitea/failover"], []uint64{2}) ||
		failing["wordpress/twelve-moves"] == nil || len(failing["wordpress/twelve-moves"]) != 0 {
		t.Errorf("failing seeds = %v", failing)
	}
	for _, r := range file.Results {
		switch {
		case r.Scenario == "wordpress/failover" && r.Seed == reportstest.SampleFailedSeed:
			checkFailedResult(t, r)
		case r.Scenario == "wordpress/twelve-moves":
			for _, chain := range r.Chains {
				if chain.Length != 13 || len(chain.Members) != 13 || chain.Members[12].State != "Active" {
					t.Errorf("seed %d: chain %s has %d members, last %+v", r.Seed, chain.Handle, chain.Length, chain.Members[len(chain.Members)-1])
				}
			}
			fallthrough
		case r.Verdict == reports.Passed:
			if r.Events != nil || len(r.Violations) != 0 {
				t.Errorf("%s seed %d passed but carries %d events, %d violations", r.Scenario, r.Seed, len(r.Events), len(r.Violations))
			}
		}
		if r.Replay == "" || len(r.Phases) == 0 {
			t.Errorf("%s seed %d: replay %q, %d phases", r.Scenario, r.Seed, r.Replay, len(r.Phases))
		}
	}
}

func checkFailedResult(t *testing.T, r reports.JSONResult) {
	t.Helper()
	if r.Verdict != reports.Failed || len(r.Violations) != 2 || len(r.Events) == 0 {
		t.Fatalf("failed seed: verdict %s, %d violations, %d events", r.Verdict, len(r.Violations), len(r.Events))
	}
	if len(r.Violations[0].Window) != 8 || len(r.Violations[1].Window) != 6 {
		t.Errorf("windows hold %d and %d events, want 8 and 6", len(r.Violations[0].Window), len(r.Violations[1].Window))
	}
	last := r.Violations[0].Window[len(r.Violations[0].Window)-1]
	if last.Kind != reports.EventViolation || last.AtMs != r.Violations[0].AtMs {
		t.Errorf("the first window does not end with its violation: %+v (violation at %v)", last, r.Violations[0].AtMs)
	}
	if r.RPOMaxMs <= 0 || r.Failovers[0].Planned || r.Failovers[0].LostWrites == 0 {
		t.Errorf("unplanned fail-over measured no loss: %+v, worst %v ms", r.Failovers[0], r.RPOMaxMs)
	}
	// The RPO ends at the cut; the loss age runs on through the isolation
	// and the fail-over to the promotion.
	if f := r.Failovers[0]; r.RTOMaxMs < f.RTOMs || f.RTOMs <= 0 || f.LossAgeMs <= f.RPOMs || f.RPOMs <= 0 {
		t.Errorf("unplanned fail-over %+v, slowest %v ms: want 0 < RPO < loss age, 0 < RTO", f, r.RTOMaxMs)
	}
	var failback *reports.JSONSync
	for i := range r.Syncs {
		if r.Syncs[i].Failback {
			failback = &r.Syncs[i]
		}
	}
	if failback == nil || failback.BytesShipped != 8<<30 || failback.BytesChanged >= failback.BytesShipped/10 {
		t.Errorf("the broken fail-back sync = %+v, want 8 GiB shipped for a small delta", failback)
	}
	if r.BytesShipped <= r.BytesChanged {
		t.Errorf("totals: shipped %d <= changed %d", r.BytesShipped, r.BytesChanged)
	}
}

// TestJSONListsAreNeverNull: tools iterate lists without a nil check.
func TestJSONListsAreNeverNull(t *testing.T) {
	run := reportstest.SampleRun()
	run.Results = append(run.Results, reports.Result{Scenario: "empty", Seed: 1, Verdict: reports.Passed})
	_, raw := decodeResults(t, run)
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case nil: // optional fields (last_sync_ms, events) are omitted, never null
			t.Errorf("%s is null", path)
		case map[string]any:
			for key, value := range v {
				walk(path+"."+key, value)
			}
		case []any:
			for _, value := range v {
				walk(path+"[]", value)
			}
		}
	}
	walk("$", generic)
}
