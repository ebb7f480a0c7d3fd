package reports

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
)

//go:embed report.html.tmpl
var pageTemplateText string

// pageTemplate renders report.html. html/template escapes every string that
// came from a run -- details, messages, names -- in the context it lands in.
var pageTemplate = template.Must(template.New("report").Parse(pageTemplateText))

// WriteHTML writes report.html for run: one self-contained page (inline CSS
// and SVG, a few lines of script to open and close all details; no external
// resource) with the summary, the failures and their replay commands, and
// full detail for the results selectDetails picks.
func WriteHTML(w io.Writer, run Run) error {
	if err := pageTemplate.Execute(w, buildPage(run)); err != nil {
		return fmt.Errorf("failed to write report.html: %w", err)
	}
	return nil
}

// pageView is everything the page shows, formatted.
type pageView struct {
	Title           string
	Name, Bed       string
	Commit          string
	Started         string
	Duration        string
	Totals          totals
	Overall         string
	Scenarios       []scenarioRow
	Failures        []failureRow
	FailuresLeftOut int
	Details         []detailView
	NotDetailed     int
	// The seeded-bug matrix, when the run is one (Run.Matrix).
	Matrix        []bugRowView
	BugTotals     BugTotals
	MatrixOverall string
}

// bugRowView is one row of the seeded-bug matrix.
type bugRowView struct {
	Bug, Does, Seed, Verdict, Class string
	CaughtBy, Check, After, Runs    string
	Replay                          string
}

type scenarioRow struct {
	Scenario                string
	Results, Passed, Failed int
	Errored                 int
	Seeds                   string
	WorstRPO, WorstRTO      string
	PlannedLostWrites       int
	Bytes                   string
	Cells                   []seedCell
}

// seedCell is one result in a scenario's seed map.
type seedCell struct {
	Class, Href, Tip string
}

type failureRow struct {
	Verdict, Scenario, Seed, Headline, Replay, Href string
}

type detailView struct {
	ID, Scenario, Seed, Verdict, Why string
	Replay, Hash, Duration, Error    string
	HeldBeside                       string // "" when the run was not held beside
	Phases                           []phaseRow
	PhasesOpen                       bool
	PhasesSummary                    string
	FailoversSummary                 string
	EventsSummary                    string
	PhasesFailed                     int
	FailoversOpen                    bool
	Timeline                         timelineView
	Failovers                        []failoverRow
	RPO                              chartView
	Bytes                            chartView
	HasSyncs                         bool
	Chains                           []chainView
	Violations                       []violationView
	Events                           []eventRow
}

type phaseRow struct {
	Name, Start, Duration, Note string
	OK                          bool
}

type failoverRow struct {
	N                                          int
	Kind, Volume, Route, At, RPO, RTO, LossAge string
	LostWrites                                 int
	Broken                                     bool
}

type violationView struct {
	N                      int
	At, Invariant, Message string
	WindowSummary          string
	Window                 []eventRow
}

type eventRow struct {
	At, Site, Kind, Detail, Class string
}

// shippedVsChanged is a scenario's bytes shipped and changed, or says that
// its bed recorded no sync: "0 B / 0 B" would read as a measurement.
func shippedVsChanged(summary scenarioSummary) string {
	if summary.Syncs == 0 {
		return "not measured"
	}
	return formatBytes(summary.ShippedBytes) + " / " + formatBytes(summary.ChangedBytes)
}

func buildPage(run Run) pageView {
	sorted := sortedResults(run.Results)
	chosen, leftOut := selectDetails(sorted)
	page := pageView{Title: "baton report: " + run.Name, Name: run.Name, Bed: run.Bed, Commit: run.Commit,
		Started: timestamp(run.Started), Duration: formatDuration(run.Duration), Totals: countVerdicts(sorted),
		FailuresLeftOut: leftOut, NotDetailed: len(sorted) - len(chosen), Overall: "passed"}
	if page.Totals.Failed+page.Totals.Errored > 0 {
		page.Overall = "failed"
	}
	anchors := anchorIDs(sorted)
	detailed := map[int]bool{}
	for _, d := range chosen {
		detailed[d.index] = true
	}
	href := func(i int) string {
		if detailed[i] {
			return "#" + anchors[i]
		}
		return ""
	}
	first := 0
	for _, summary := range summarize(sorted) {
		row := scenarioRow{Scenario: summary.Scenario, Results: summary.Results, Passed: summary.Passed,
			Failed: summary.Failed, Errored: summary.Errored, WorstRPO: formatDuration(summary.WorstRPO),
			WorstRTO: formatDuration(summary.WorstRTO), PlannedLostWrites: summary.LostWrites,
			Seeds: fmt.Sprintf("%d-%d", summary.SeedFirst, summary.SeedLast),
			Bytes: shippedVsChanged(summary)}
		for i := first; i < first+summary.Results; i++ {
			r := sorted[i]
			row.Cells = append(row.Cells, seedCell{Class: "seed seed-" + verdictClass(r.Verdict), Href: href(i),
				Tip: fmt.Sprintf("seed %d: %s", r.Seed, r.Verdict)})
		}
		first += summary.Results
		page.Scenarios = append(page.Scenarios, row)
	}
	for i, r := range sorted {
		if r.Verdict != Passed {
			page.Failures = append(page.Failures, failureRow{Verdict: verdictClass(r.Verdict), Scenario: r.Scenario,
				Seed: strconv.FormatUint(r.Seed, 10), Headline: failureHeadline(r), Replay: r.Replay, Href: href(i)})
		}
	}
	for _, d := range chosen {
		page.Details = append(page.Details, buildDetail(sorted[d.index], d.why, anchors[d.index]))
	}
	addMatrix(&page, run.Matrix)
	return page
}

// addMatrix puts a seeded-bug matrix on the page: a row per bug, and a
// banner that fails unless every bug run was caught.
func addMatrix(page *pageView, rows []BugRow) {
	if len(rows) == 0 {
		return
	}
	page.BugTotals, page.MatrixOverall = CountBugs(rows), "passed"
	if page.BugTotals.Caught != page.BugTotals.Bugs {
		page.MatrixOverall = "failed"
	}
	for _, row := range rows {
		view := bugRowView{Bug: row.Bug, Does: row.Does, Seed: row.Seed, Verdict: string(row.Verdict()), Class: "failed",
			Runs: fmt.Sprintf("%d of %d", row.CaughtRuns(), len(row.Runs))}
		switch row.Verdict() {
		case BugCaught:
			r, _ := row.CaughtBy()
			check, message, after := r.Catch()
			view.Class, view.CaughtBy = "passed", fmt.Sprintf("%s seed %d", r.Scenario, r.Seed)
			view.Check, view.After, view.Replay = check+": "+message, formatDuration(after), r.Replay
		case BugNotRun:
			view.Class, view.Check = "errored", strings.Join(row.Lacking, "; ")
		case BugErrored:
			view.Class = "errored"
		}
		page.Matrix = append(page.Matrix, view)
	}
}

func buildDetail(r Result, why, id string) detailView {
	view := detailView{ID: id, Scenario: r.Scenario, Seed: strconv.FormatUint(r.Seed, 10),
		Verdict: verdictClass(r.Verdict), Why: why, Replay: r.Replay, Hash: r.EventLogHash,
		Duration: formatDuration(r.Duration), Error: r.Error, Timeline: buildTimeline(r),
		RPO: buildRPOChart(r), Bytes: buildBytesChart(r), HasSyncs: len(r.Syncs) > 0}
	if r.HeldBeside > 0 {
		view.HeldBeside = formatDuration(r.HeldBeside)
	}
	for _, p := range r.Phases {
		if !p.OK {
			view.PhasesFailed++
		}
		view.Phases = append(view.Phases, phaseRow{Name: p.Name, Start: formatOffset(offset(r, p.Start)),
			Duration: formatDuration(p.End.Sub(p.Start)), OK: p.OK, Note: p.Note})
	}
	for i, f := range r.Failovers {
		row := failoverRow{N: i + 1, Kind: "unplanned", Volume: f.Volume, Route: f.From + " → " + f.To,
			At: formatOffset(offset(r, f.At)), RPO: formatDuration(f.RPO), RTO: formatDuration(f.RTO),
			LossAge: formatDuration(f.LossAge), LostWrites: f.LostWrites, Broken: f.Planned && f.LostWrites > 0}
		if f.Planned {
			row.Kind = "planned"
		}
		view.Failovers = append(view.Failovers, row)
	}
	view.PhasesOpen = len(view.Phases) <= openRowsMax || view.PhasesFailed > 0
	view.PhasesSummary = countOf(len(view.Phases), "phase", "phases")
	if view.PhasesFailed > 0 {
		view.PhasesSummary += fmt.Sprintf(", %d failed", view.PhasesFailed)
	}
	view.FailoversSummary = countOf(len(view.Failovers), "fail-over", "fail-overs")
	view.FailoversOpen = len(view.Failovers) <= openRowsMax
	for _, c := range r.Chains {
		view.Chains = append(view.Chains, buildChain(r, c))
	}
	for i, v := range r.Violations {
		view.Violations = append(view.Violations, violationView{N: i + 1, At: formatOffset(offset(r, v.At)),
			Invariant: v.Invariant, Message: v.Message, Window: eventRows(r, v.Window),
			WindowSummary: countOf(len(v.Window), "event", "events")})
	}
	view.Events = eventRows(r, r.Timeline[:min(len(r.Timeline), eventLogMax)])
	view.EventsSummary = countOf(len(r.Timeline), "event", "events")
	if len(view.Events) < len(r.Timeline) {
		view.EventsSummary = fmt.Sprintf("the first %d of %d events", len(view.Events), len(r.Timeline))
	}
	return view
}

// countOf writes a count with its noun: "1 phase", "27 phases".
func countOf(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return strconv.Itoa(n) + " " + plural
}

func eventRows(r Result, events []Event) []eventRow {
	rows := make([]eventRow, 0, len(events))
	for _, e := range events {
		site := e.Site
		if site == "" {
			site = worldLane
		}
		kind := string(e.Kind)
		if e.Edge != EdgeNone {
			kind += " " + string(e.Edge)
		}
		rows = append(rows, eventRow{At: formatOffset(offset(r, e.At)), Site: site, Kind: kind, Detail: e.Detail,
			Class: "ev-" + kindClass(e.Kind)})
	}
	return rows
}

// verdictClass maps a verdict onto a CSS class suffix (and the word shown).
func verdictClass(v Verdict) string {
	switch v {
	case Passed, Failed, Errored:
		return string(v)
	}
	return "errored"
}

// anchorIDs gives every result an element id: "r-" and the scenario's
// letters and digits, then the seed; a repeated one gets a counter.
func anchorIDs(sorted []Result) []string {
	ids := make([]string, len(sorted))
	seen := map[string]int{}
	for i, r := range sorted {
		var slug strings.Builder
		for _, c := range strings.ToLower(r.Scenario) {
			if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
				slug.WriteRune(c)
			} else {
				slug.WriteByte('-')
			}
		}
		id := "r-" + slug.String() + "-" + strconv.FormatUint(r.Seed, 10)
		seen[id]++
		if seen[id] > 1 {
			id += "-" + strconv.Itoa(seen[id])
		}
		ids[i] = id
	}
	return ids
}
