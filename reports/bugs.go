package reports

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// BugMissed is the invariant a run breaks that passed with a seeded bug
// switched on: the bed did not catch it.
const BugMissed = "seeded bug: missed"

// WithBugs marks a result as run with the seeded bugs switched on (none:
// the result as it is). A run that passed did not catch them, and fails,
// naming them: a report of a run with a bug on never says PASSED.
func WithBugs(r Result, bugs []string) Result {
	if len(bugs) == 0 {
		return r
	}
	r.Bugs = slices.Clone(bugs)
	if r.Verdict == Passed {
		r.Verdict = Failed
		r.Violations = append(r.Violations, Violation{Invariant: BugMissed, At: r.Started.Add(r.Duration),
			Message: fmt.Sprintf("%s switched on, and every check of %s passed", strings.Join(bugs, ", "), r.Scenario)})
	}
	return r
}

// Caught reports whether a result run with a bug on failed on its own: a
// check or an invariant of the bed caught the bug (an errored bed caught
// nothing).
func (r Result) Caught() bool {
	return len(r.Bugs) > 0 && r.Verdict == Failed && slices.ContainsFunc(r.Violations, func(v Violation) bool {
		return v.Invariant != BugMissed
	})
}

// BugRow is one row of a seeded-bug matrix: one bug switched on, and the
// runs of the scenarios that should catch it.
type BugRow struct {
	Bug  string // "demote-end"
	Does string // what the code does with it on
	// Seed is the seed document and commit it comes from.
	Seed string
	// Scenarios are the stories that should catch it; Lacking says, for
	// each one the bed cannot tell, why ("gitea/moves: ...").
	Scenarios []string
	Lacking   []string
	Runs      []Result
}

// BugVerdict is a row's outcome.
type BugVerdict string

const (
	// BugCaught: a run failed on a check of its own.
	BugCaught BugVerdict = "caught"
	// BugMissedRow: every run passed its checks with the bug on.
	BugMissedRow BugVerdict = "missed"
	// BugErrored: no run caught it, and a bed errored.
	BugErrored BugVerdict = "errored"
	// BugNotRun: the bed tells none of the stories that should catch it.
	BugNotRun BugVerdict = "not run"
)

// Verdict is the row's outcome.
func (b BugRow) Verdict() BugVerdict {
	if _, ok := b.CaughtBy(); ok {
		return BugCaught
	}
	if len(b.Runs) == 0 {
		return BugNotRun
	}
	if slices.ContainsFunc(b.Runs, func(r Result) bool { return r.Verdict == Errored }) {
		return BugErrored
	}
	return BugMissedRow
}

// CaughtBy is the first run (by scenario, then seed) that caught the bug.
func (b BugRow) CaughtBy() (Result, bool) {
	for _, r := range sortedResults(b.Runs) {
		if r.Caught() {
			return r, true
		}
	}
	return Result{}, false
}

// Catch is how a run caught its bug: the first check that failed (its
// invariant and message), and how long after the run's start.
func (r Result) Catch() (check, message string, after time.Duration) {
	for _, v := range r.Violations {
		if v.Invariant != BugMissed {
			return v.Invariant, v.Message, offset(r, v.At)
		}
	}
	return "", "", 0
}

// CaughtRuns counts the runs of the row that caught the bug.
func (b BugRow) CaughtRuns() int {
	n := 0
	for _, r := range b.Runs {
		if r.Caught() {
			n++
		}
	}
	return n
}

// BugTotals counts a matrix's rows by verdict.
type BugTotals struct {
	Bugs, Caught, Missed, Errored, NotRun int
}

// CountBugs counts the rows of a matrix by verdict.
func CountBugs(rows []BugRow) BugTotals {
	t := BugTotals{Bugs: len(rows)}
	for _, row := range rows {
		switch row.Verdict() {
		case BugCaught:
			t.Caught++
		case BugMissedRow:
			t.Missed++
		case BugErrored:
			t.Errored++
		default:
			t.NotRun++
		}
	}
	return t
}
