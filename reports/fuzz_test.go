package reports_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/baton-dr/baton/reports"
)

// FuzzRenderers feeds the three renderers what a bed could hand over:
// arbitrary names, details and messages, instants before, after and far from
// the result's start, spans that never close or close twice. Every renderer
// must produce a well-formed document without panicking, and no text may
// become markup.
func FuzzRenderers(f *testing.F) {
	f.Add("wordpress/failover", "promote", "chain: x", uint64(3), int64(5e9), int64(-1), byte(1), "cut")
	f.Add("<script>", "]]>\x00\xff", "&amp;", uint64(0), int64(-9e18), int64(9e18), byte(2), "")
	f.Add("", "", "", uint64(1<<63), int64(0), int64(0), byte(0), "s")
	f.Fuzz(func(t *testing.T, scenario, detail, message string, seed uint64, first, second int64, verdict byte, span string) {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		kinds := []reports.EventKind{reports.EventPartition, reports.EventAction, reports.EventRole, reports.EventKind(detail)}
		var events []reports.Event
		for i, offset := range []int64{first, second, first / 2, second / 3} {
			events = append(events, reports.Event{At: start.Add(time.Duration(offset)), Site: []string{"site-a", "", detail, "hub"}[i],
				Kind: kinds[i], Detail: detail, Span: span, Edge: []reports.Edge{reports.EdgeBegin, reports.EdgeEnd, "", reports.EdgeBegin}[i]})
		}
		result := reports.Result{Scenario: scenario, Seed: seed, Replay: detail, Started: start, Duration: time.Duration(second),
			Verdict:    []reports.Verdict{reports.Passed, reports.Failed, reports.Errored, reports.Verdict(message)}[verdict%4],
			Phases:     []reports.Phase{{Name: detail, Start: start.Add(time.Duration(first)), End: start.Add(time.Duration(second))}},
			Failovers:  []reports.Failover{{Volume: detail, RPO: time.Duration(first), At: start.Add(time.Duration(second)), Planned: verdict&4 != 0, LostWrites: int(verdict)}},
			Syncs:      []reports.Sync{{Volume: detail, BytesShipped: seed, BytesChanged: uint64(first), At: start}},
			Chains:     []reports.Chain{{Handle: detail, Members: []reports.Member{{Site: detail, Ref: message, State: detail}, {Site: "site-a", Generation: uint32(seed)}}}},
			Violations: []reports.Violation{{Invariant: message, Message: message, At: start.Add(time.Duration(first)), Window: events}},
			Timeline:   events, Error: message}
		run := reports.Run{Name: message, Bed: detail, Results: []reports.Result{result, result}}

		var junit bytes.Buffer
		if err := reports.WriteJUnit(&junit, run); err != nil {
			t.Fatal(err)
		}
		var suites reporters.JUnitTestSuites
		if err := xml.Unmarshal(junit.Bytes(), &suites); err != nil {
			t.Fatalf("junit.xml does not parse: %v\n%s", err, junit.String())
		}
		if suites.Tests != 2 || len(suites.TestSuites) != 1 {
			t.Fatalf("junit.xml holds %d tests in %d suites, want 2 in 1", suites.Tests, len(suites.TestSuites))
		}
		var results bytes.Buffer
		if err := reports.WriteJSON(&results, run); err != nil {
			t.Fatal(err)
		}
		var file reports.JSONFile
		if err := json.Unmarshal(results.Bytes(), &file); err != nil || len(file.Results) != 2 || file.Results[0].Seed != seed {
			t.Fatalf("results.json does not round-trip: %v", err)
		}
		var page bytes.Buffer
		if err := reports.WriteHTML(&page, run); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(page.String(), "<script"); n != 1 {
			t.Fatalf("report.html holds %d scripts", n)
		}
	})
}
