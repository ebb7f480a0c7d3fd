package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// JUnit output follows the schema of ginkgo v2's JUnit reporter (the same
// elements and attributes as reporters.JUnitTestSuites; the test decodes our
// output with ginkgo's own types), so CI systems that read `ginkgo
// --junit-report` read ours, and ginkgo's MergeAndCleanupJUnitReports merges
// the two. It is written with encoding/xml rather than through
// reporters.GenerateJUnitReportWithConfig because that function renders one
// ginkgo types.Report -- one suite of specs -- to a file path: one suite per
// scenario would take a temporary file per scenario and a merge step that
// deletes its inputs, every suite would carry some twenty ginkgo-specific
// properties (RandomSeed, LabelFilter, FocusFiles...) that say nothing about
// a scenario sweep, and failure bodies would be formatted by ginkgo's console
// reporter around code locations we do not have, not around violations and
// their event windows. Importing the reporters package would also pull
// golang.org/x/tools/go/packages into every binary that writes a report.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Disabled int          `xml:"disabled,attr"`
	Errors   int          `xml:"errors,attr"`
	Failures int          `xml:"failures,attr"`
	Time     float64      `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Package    string          `xml:"package,attr"`
	Tests      int             `xml:"tests,attr"`
	Disabled   int             `xml:"disabled,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Errors     int             `xml:"errors,attr"`
	Failures   int             `xml:"failures,attr"`
	Time       float64         `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties junitProperties `xml:"properties"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperties struct {
	Properties []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string           `xml:"name,attr"`
	Classname  string           `xml:"classname,attr"`
	Status     string           `xml:"status,attr"`
	Time       float64          `xml:"time,attr"`
	Error      *junitProblem    `xml:"error,omitempty"`
	Failure    *junitProblem    `xml:"failure,omitempty"`
	Skipped    *junitProblem    `xml:"skipped,omitempty"`
	SystemOut  *junitText       `xml:"system-out,omitempty"`
	Properties *junitProperties `xml:"properties,omitempty"`
}

// junitProblem is a <failure> (the system broke an invariant) or an <error>
// (the bed itself failed).
type junitProblem struct {
	Message     string `xml:"message,attr"`
	Type        string `xml:"type,attr"`
	Description string `xml:",cdata"`
}

// junitText is multi-line text kept as CDATA, so that junit.xml shows its
// lines as lines instead of one line of &#xA; (readers decode both alike).
type junitText struct {
	Text string `xml:",cdata"`
}

// WriteJUnit writes run as JUnit XML: one testsuite per scenario, one
// testcase per seed ("seed 42", classname the scenario). A failed seed's
// <failure> carries each violation with its event window and the replay
// command; an errored seed's <error> carries the bed's error. Times are the
// results' durations: simulated time on the simulation bed.
func WriteJUnit(w io.Writer, run Run) error {
	suites := junitSuites{Name: run.Name}
	var total time.Duration
	sorted := sortedResults(run.Results)
	for start := 0; start < len(sorted); {
		end := start + 1
		for end < len(sorted) && sorted[end].Scenario == sorted[start].Scenario {
			end++
		}
		suite := junitScenario(run, sorted[start:end])
		suites.Tests += suite.Tests
		suites.Errors += suite.Errors
		suites.Failures += suite.Failures
		total += suiteDuration(sorted[start:end])
		suites.Suites = append(suites.Suites, suite)
		start = end
	}
	if len(run.Matrix) > 0 {
		suite := junitMatrix(run)
		suites.Tests += suite.Tests
		suites.Errors += suite.Errors
		suites.Failures += suite.Failures
		suites.Suites = append(suites.Suites, suite)
	}
	suites.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("failed to write junit.xml: %w", err)
	}
	encoder := xml.NewEncoder(w)
	encoder.Indent("", "  ")
	if err := encoder.Encode(suites); err != nil {
		return fmt.Errorf("failed to write junit.xml: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("failed to write junit.xml: %w", err)
	}
	return nil
}

// junitScenario builds the suite of one scenario's results.
func junitScenario(run Run, results []Result) junitSuite {
	suite := junitSuite{Name: results[0].Scenario, Package: run.Bed, Timestamp: junitTimestamp(run.Started),
		Time: seconds(suiteDuration(results)),
		Properties: junitProperties{Properties: []junitProperty{
			{Name: "bed", Value: run.Bed}, {Name: "commit", Value: run.Commit}, {Name: "run", Value: run.Name}}}}
	for _, result := range results {
		if result.Scenario != suite.Name {
			panic("reports: a JUnit suite mixes scenarios")
		}
		testcase := junitCase{Name: "seed " + strconv.FormatUint(result.Seed, 10), Classname: result.Scenario,
			Status: string(result.Verdict), Time: seconds(result.Duration),
			SystemOut: &junitText{Text: xmlSafe(junitSummary(result))},
			Properties: &junitProperties{Properties: []junitProperty{
				{Name: "seed", Value: strconv.FormatUint(result.Seed, 10)},
				{Name: "replay", Value: result.Replay},
				{Name: "event_log_hash", Value: result.EventLogHash}}}}
		switch result.Verdict {
		case Passed:
		case Failed:
			testcase.Failure = &junitProblem{Message: failureHeadline(result), Type: "violation",
				Description: xmlSafe(failureText(result))}
			suite.Failures++
		default:
			testcase.Error = &junitProblem{Message: result.Error, Type: string(result.Verdict),
				Description: xmlSafe(failureText(result))}
			suite.Errors++
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, testcase)
	}
	return suite
}

// junitMatrix is the suite "seeded bugs": a testcase per bug, which passes
// when a run caught it, fails when every run missed it, errs when a bed
// errored, and is skipped, saying why, when the bed tells none of its
// stories.
func junitMatrix(run Run) junitSuite {
	suite := junitSuite{Name: "seeded bugs", Package: run.Bed, Timestamp: junitTimestamp(run.Started),
		Properties: junitProperties{Properties: []junitProperty{
			{Name: "bed", Value: run.Bed}, {Name: "commit", Value: run.Commit}, {Name: "run", Value: run.Name}}}}
	for _, row := range run.Matrix {
		testcase := junitCase{Name: row.Bug, Classname: "seeded bugs", Status: string(row.Verdict()),
			Time: seconds(suiteDuration(row.Runs)), SystemOut: &junitText{Text: xmlSafe(bugSummary(row))}}
		switch row.Verdict() {
		case BugCaught:
		case BugMissedRow:
			testcase.Failure = &junitProblem{Message: row.Bug + " missed by " + strings.Join(row.Scenarios, ", "),
				Type: "missed", Description: xmlSafe(bugSummary(row))}
			suite.Failures++
		case BugErrored:
			testcase.Error = &junitProblem{Message: row.Bug + ": a bed errored and no run caught it", Type: "errored",
				Description: xmlSafe(bugSummary(row))}
			suite.Errors++
		default:
			testcase.Skipped = &junitProblem{Message: "not run on the " + run.Bed + " bed: " + strings.Join(row.Lacking, "; ")}
			suite.Skipped++
		}
		suite.Tests++
		suite.Time += testcase.Time
		suite.Cases = append(suite.Cases, testcase)
	}
	return suite
}

// bugSummary is a matrix row in text: what the bug does, how it was
// caught, and each run's outcome with its replay command.
func bugSummary(row BugRow) string {
	var text strings.Builder
	fmt.Fprintf(&text, "%s: %s (%s)\n", row.Bug, row.Does, row.Seed)
	if r, ok := row.CaughtBy(); ok {
		check, message, after := r.Catch()
		fmt.Fprintf(&text, "caught by %s seed %d after %s: %s: %s\n", r.Scenario, r.Seed, formatDuration(after), check, message)
	}
	for _, lacking := range row.Lacking {
		fmt.Fprintf(&text, "not run: %s\n", lacking)
	}
	for _, r := range sortedResults(row.Runs) {
		outcome := "missed"
		switch {
		case r.Caught():
			outcome = "caught"
		case r.Verdict == Errored:
			outcome = "errored: " + r.Error
		}
		fmt.Fprintf(&text, "%s seed %d: %s; replay: %s\n", r.Scenario, r.Seed, outcome, r.Replay)
	}
	return text.String()
}

// failureHeadline is the one line a CI system shows for a failed seed.
func failureHeadline(result Result) string {
	if len(result.Violations) > 0 {
		first := result.Violations[0]
		headline := first.Invariant + ": " + first.Message
		if more := len(result.Violations) - 1; more > 0 {
			headline += fmt.Sprintf(" (and %d more)", more)
		}
		return headline
	}
	for _, phase := range result.Phases {
		if !phase.OK {
			return strings.TrimSuffix("phase "+phase.Name+" failed: "+phase.Note, ": ")
		}
	}
	if result.Error != "" {
		return result.Error
	}
	return "failed"
}

// failureText lists every violation with its event window, then the replay
// command: what an engineer needs to start debugging from the CI page.
func failureText(result Result) string {
	var text strings.Builder
	if result.Error != "" {
		fmt.Fprintf(&text, "error: %s\n", result.Error)
	}
	for i, v := range result.Violations {
		fmt.Fprintf(&text, "violation %d of %d at %s: %s\n  %s\n", i+1, len(result.Violations),
			formatOffset(offset(result, v.At)), v.Invariant, v.Message)
		if len(v.Window) > 0 {
			text.WriteString("  window:\n")
		}
		for _, e := range v.Window {
			text.WriteString("    " + eventLine(result, e) + "\n")
		}
	}
	fmt.Fprintf(&text, "replay: %s\n", result.Replay)
	return text.String()
}

// junitSummary is a testcase's system-out: the replay command, the phases
// and the fail-over measurements, for every seed.
func junitSummary(result Result) string {
	var text strings.Builder
	fmt.Fprintf(&text, "replay: %s\n", result.Replay)
	if result.EventLogHash != "" {
		fmt.Fprintf(&text, "event log hash: %s\n", result.EventLogHash)
	}
	for _, phase := range result.Phases {
		verdict := "ok"
		if !phase.OK {
			verdict = "FAILED"
		}
		fmt.Fprintf(&text, "phase %-24s at %-10s took %-10s %s", phase.Name, formatOffset(offset(result, phase.Start)),
			formatDuration(phase.End.Sub(phase.Start)), verdict)
		if phase.Note != "" {
			text.WriteString(" -- " + phase.Note)
		}
		text.WriteString("\n")
	}
	for _, f := range result.Failovers {
		kind := "unplanned fail-over"
		if f.Planned {
			kind = "planned relocation"
		}
		fmt.Fprintf(&text, "%s %s -> %s of %s: RPO %s (%d writes lost, loss age %s), RTO %s\n", kind, f.From, f.To, f.Volume,
			formatDuration(f.RPO), f.LostWrites, formatDuration(f.LossAge), formatDuration(f.RTO))
	}
	shipped, changed := syncTotals(result)
	if len(result.Syncs) > 0 {
		fmt.Fprintf(&text, "syncs: %d, %s shipped for %s changed\n", len(result.Syncs), formatBytes(shipped), formatBytes(changed))
	}
	for _, chain := range result.Chains {
		fmt.Fprintf(&text, "chain %s: %d members\n", chain.Handle, len(chain.Members))
	}
	return text.String()
}

// eventLine renders one event for text reports.
func eventLine(result Result, e Event) string {
	site := e.Site
	if site == "" {
		site = "world"
	}
	kind := string(e.Kind)
	if e.Edge != EdgeNone {
		kind += " " + string(e.Edge)
	}
	return fmt.Sprintf("%-12s %-8s %-16s %s", formatOffset(offset(result, e.At)), site, kind, e.Detail)
}

// junitTimestamp is ginkgo's timestamp format, in UTC.
func junitTimestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// suiteDuration adds up the results' durations; summing durations, not
// float seconds, keeps the totals free of rounding noise.
func suiteDuration(results []Result) time.Duration {
	var total time.Duration
	for _, result := range results {
		total += result.Duration
	}
	return total
}

// xmlSafe replaces what XML 1.0 cannot carry at all -- invalid UTF-8 and
// control characters other than tab, newline and carriage return -- with
// U+FFFD, since CDATA sections are written unescaped.
func xmlSafe(text string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			return '\uFFFD'
		}
		return r
	}, strings.ToValidUTF8(text, "\uFFFD"))
}
