package sweep_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/reportstest"
)

// A sweep's report draws its sampled passed results with their events, as a
// single run's report does: every detail section shows marks in the site
// lanes and a non-empty event log. They once showed "event log: 0 events"
// and empty lanes, the sweep having dropped every passed run's timeline.
func TestASweepsSampledResultsShowTheirEventsInChromium(t *testing.T) {
	run := sweepSeeds(t, "wordpress/protect", 4)
	for _, r := range run.Results {
		if r.Verdict != reports.Passed {
			t.Fatalf("seed %d %s: %s", r.Seed, r.Verdict, r.Error)
		}
	}
	tab, _ := reportstest.OpenInChromium(t, run)
	type section struct {
		ID     string `json:"id"`
		Marks  int    `json:"marks"`
		Events string `json:"events"`
	}
	script := `Array.from(document.querySelectorAll("section.result")).map(s => ({id: s.id,
		marks: s.querySelectorAll("svg.timeline circle, svg.timeline path[class^=mark-]").length,
		events: s.querySelector("details.event-log summary").textContent}))`
	sections, err := chromedp.Run(tab, chromedp.Evaluate[[]section](script))
	if err != nil {
		t.Fatal(err)
	}
	if len(sections) == 0 {
		t.Fatal("the report draws no result in full; want the sampled seeds")
	}
	for _, s := range sections {
		if s.Marks == 0 || s.Events == "event log: 0 events" {
			t.Errorf("%s: %d marks in its timeline, %q; want its events drawn", s.ID, s.Marks, s.Events)
		}
	}
}
