package reports_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/reportstest"
)

var screenshots = flag.String("screenshots", "", "write PNG screenshots of the sample report.html into this directory, to look at")

// pageFacts is what the browser reports of the rendered page.
type pageFacts struct {
	Title      string   `json:"title"`
	Banner     string   `json:"banner"`
	Scenarios  int      `json:"scenarios"`
	SeedCells  int      `json:"seedCells"`
	Failures   []string `json:"failures"` // replay commands of the failures table
	Sections   []string `json:"sections"`
	Lanes      []string `json:"lanes"` // of the failed result's timeline
	Shades     int      `json:"shades"`
	Violations int      `json:"violations"` // lines in the failed timeline
	ViolRows   int      `json:"violRows"`
	Failback   int      `json:"failback"`
	RPOBars    int      `json:"rpoBars"`
	Chain13    []int    `json:"chain13"` // members per chain of twelve-moves seed 1
	Problems   int      `json:"problems"`
	TimelinePx float64  `json:"timelinePx"`
	Opened     int      `json:"opened"`
	Closed     int      `json:"closed"`
	Details    int      `json:"details"`
}

const factsScript = `(() => {
  const q = (s, root) => Array.from((root || document).querySelectorAll(s));
  const failed = document.getElementById("r-wordpress-failover-3");
  const moves = document.getElementById("r-wordpress-twelve-moves-1");
  const facts = {
    title: document.title,
    banner: document.getElementById("verdict").textContent.trim(),
    scenarios: q("#scenarios tr").length - 1,
    seedCells: q(".seed").length,
    failures: q("#failures tr.failure code.replay").map(e => e.textContent),
    sections: q("section.result").map(e => e.id),
    lanes: q("svg.timeline text.lane", failed).map(e => e.textContent),
    shades: q("svg.timeline .shade-partition", failed).length,
    violations: q("svg.timeline .violation-line", failed).length,
    violRows: q("table.violations tr.violation", failed).length,
    failback: q("svg.chart .bar-failback", failed).length,
    rpoBars: q("svg.chart .bar-unplanned", failed).length,
    chain13: q("svg.chain", moves).map(svg => q(".member", svg).length),
    problems: q(".problem").length,
    timelinePx: failed.querySelector("svg.timeline").getBoundingClientRect().width,
    details: q("details").length,
  };
  document.querySelector('button[data-details="open"]').click();
  facts.opened = q("details").filter(d => d.open).length;
  document.querySelector('button[data-details="close"]').click();
  facts.closed = q("details").filter(d => d.open).length;
  return facts;
})()`

// TestReportInChromium opens the sample run's report.html in headless
// Chromium: it must load without a script error, console error or request
// beyond itself, and show the summary, the failures with their replay
// commands, the failed result's timeline, charts, chains and violations.
func TestReportInChromium(t *testing.T) {
	tab, opened := reportstest.OpenInChromium(t, reportstest.SampleRun())
	if requests := opened.Requests(); !slices.Equal(requests, []string{opened.URL}) {
		t.Errorf("the page requested %q; it must load nothing but itself", requests)
	}
	facts, err := chromedp.Run(tab, chromedp.Evaluate[pageFacts](factsScript))
	if err != nil {
		t.Fatal(err)
	}
	checkFacts(t, facts)
	if *screenshots != "" {
		saveScreenshots(t, tab, *screenshots)
	}
}

func checkFacts(t *testing.T, f pageFacts) {
	t.Helper()
	wantSections := []string{"r-gitea-failover-2", "r-wordpress-failover-3", // failures first
		"r-gitea-failover-1", "r-gitea-failover-3", "r-wordpress-failover-1", "r-wordpress-failover-5",
		"r-wordpress-twelve-moves-1"}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"title", f.Title, "baton report: sim sweep"},
		{"banner", f.Banner, "11 results: 9 passed, 1 failed, 1 errored"},
		{"scenario rows", f.Scenarios, 3},
		{"seed map cells", f.SeedCells, 11},
		{"failures' replay commands", fmt.Sprint(f.Failures), fmt.Sprint([]string{
			"batonctl scenario run gitea/failover --bed sim --seed 2",
			"batonctl scenario run wordpress/failover --bed sim --seed 3"})},
		{"detail sections", fmt.Sprint(f.Sections), fmt.Sprint(wantSections)},
		{"lanes", fmt.Sprint(f.Lanes), "[site-a site-b hub]"},
		{"partition shades", f.Shades, 1},
		{"violation lines", f.Violations, 2},
		{"violation rows", f.ViolRows, 2},
		{"fail-back bars", f.Failback, 1},
		{"unplanned RPO bars", f.RPOBars, 2},
		{"chains of twelve moves", fmt.Sprint(f.Chain13), "[13 13]"},
		{"chain problems shown", f.Problems, 0},
		{"details opened by the script", f.Opened, f.Details},
		{"details closed by the script", f.Closed, 0},
	} {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	if f.TimelinePx < 900 {
		t.Errorf("the timeline is drawn %v px wide in a 1280 px window", f.TimelinePx)
	}
}

// saveScreenshots writes the page in bands of 1,400 px, and the failed
// result's section on its own.
func saveScreenshots(t *testing.T, tab context.Context, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	size, err := chromedp.Run(tab, chromedp.Evaluate[struct{ Height, FailedTop float64 }](`({
		height: document.documentElement.scrollHeight,
		failedTop: document.getElementById("r-wordpress-failover-3").getBoundingClientRect().top + scrollY})`))
	if err != nil {
		t.Fatal(err)
	}
	bands := map[string]float64{"failed-seed": size.FailedTop}
	for i := 0; i*1400 < int(size.Height) && i < 20; i++ {
		bands[fmt.Sprintf("page-%02d", i)] = float64(i * 1400)
	}
	for name, top := range bands {
		png, err := reportstest.Screenshot(tab, top, 1400)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLargeReportInChromium opens the report of 1,000 results: it must load
// cleanly and hold a detail section for every failure and a few samples.
func TestLargeReportInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("renders and opens 1,000 results")
	}
	run := reportstest.LargeRun(1000)
	tab, _ := reportstest.OpenInChromium(t, run)
	type pageCounts struct {
		Sections int `json:"sections"`
		Failures int `json:"failures"`
		Cells    int `json:"cells"`
	}
	script := `({sections: document.querySelectorAll("section.result").length,
		failures: document.querySelectorAll("#failures tr.failure").length,
		cells: document.querySelectorAll(".seed").length})`
	counts, err := chromedp.Run(tab, chromedp.Evaluate[pageCounts](script))
	if err != nil {
		t.Fatal(err)
	}
	failures := 0
	for _, r := range run.Results {
		if r.Verdict != reports.Passed {
			failures++
		}
	}
	if counts.Failures != failures || counts.Cells != 1000 || counts.Sections < failures || counts.Sections > failures+6 {
		t.Errorf("page holds %+v; want %d failures, 1000 cells, %d to %d sections", counts, failures, failures, failures+6)
	}
}
