package reports_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/reporters"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/reportstest"
)

// decodeJUnit reads junit.xml with ginkgo's own JUnit types: what parses
// here parses wherever ginkgo's reports do.
func decodeJUnit(t *testing.T, run reports.Run) reporters.JUnitTestSuites {
	t.Helper()
	var out bytes.Buffer
	if err := reports.WriteJUnit(&out, run); err != nil {
		t.Fatal(err)
	}
	var suites reporters.JUnitTestSuites
	if err := xml.Unmarshal(out.Bytes(), &suites); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	return suites
}

func TestJUnitOneSuitePerScenarioOneCasePerSeed(t *testing.T) {
	suites := decodeJUnit(t, reportstest.SampleRun())
	if suites.Tests != 11 || suites.Failures != 1 || suites.Errors != 1 {
		t.Errorf("totals: tests=%d failures=%d errors=%d; want 11, 1, 1", suites.Tests, suites.Failures, suites.Errors)
	}
	var names []string
	for _, suite := range suites.TestSuites {
		names = append(names, suite.Name)
		for i, testcase := range suite.TestCases {
			if testcase.Classname != suite.Name {
				t.Errorf("%s: case %q has classname %q", suite.Name, testcase.Name, testcase.Classname)
			}
			if want := "seed " + string(rune('1'+i)); testcase.Name != want {
				t.Errorf("%s: case %d is %q, want %q (ordered by seed)", suite.Name, i, testcase.Name, want)
			}
			if !strings.Contains(testcase.SystemOut, "replay: batonctl scenario run "+suite.Name) {
				t.Errorf("%s %s: system-out lacks the replay command:\n%s", suite.Name, testcase.Name, testcase.SystemOut)
			}
		}
	}
	if got := strings.Join(names, ","); got != "gitea/failover,wordpress/failover,wordpress/twelve-moves" {
		t.Errorf("suites = %s, want one per scenario in name order", got)
	}
}

func TestJUnitFailureCarriesViolationsWindowsAndReplay(t *testing.T) {
	suites := decodeJUnit(t, reportstest.SampleRun())
	failed := findCase(t, suites, "wordpress/failover", "seed 3")
	if failed.Failure == nil || failed.Status != "failed" {
		t.Fatalf("seed 3 has no failure: %+v", failed)
	}
	if !strings.HasPrefix(failed.Failure.Message, "chain: resolution returns the active end: ") ||
		!strings.HasSuffix(failed.Failure.Message, "(and 1 more)") {
		t.Errorf("failure message = %q", failed.Failure.Message)
	}
	for _, want := range []string{
		"violation 1 of 2 at +4m50s: chain: resolution returns the active end",
		"violation 2 of 2 at +4m50s: volume: fail-back ships only the delta",
		"partition end    site-a reachable again", // a line of the first window
		"replay: batonctl scenario run wordpress/failover --bed sim --seed 3",
	} {
		if !strings.Contains(failed.Failure.Description, want) {
			t.Errorf("failure text lacks %q:\n%s", want, failed.Failure.Description)
		}
	}
	errored := findCase(t, suites, "gitea/failover", "seed 2")
	if errored.Error == nil || errored.Error.Type != "errored" ||
		!strings.Contains(errored.Error.Message, "kube-apiserver did not become ready") {
		t.Errorf("the errored seed's <error> = %+v", errored.Error)
	}
	passed := findCase(t, suites, "wordpress/twelve-moves", "seed 1")
	if passed.Failure != nil || passed.Error != nil || passed.Status != "passed" {
		t.Errorf("a passed seed carries a problem: %+v", passed)
	}
}

func TestJUnitSurvivesHostileText(t *testing.T) {
	run := reportstest.SampleRun()
	hostile := "]]> <b>&\x00\x1b\xff end"
	run.Results[0].Replay = hostile
	run.Results[0].Violations = append(run.Results[0].Violations, reports.Violation{Invariant: hostile, Message: hostile,
		Window: []reports.Event{{Detail: hostile}}})
	run.Results[0].Verdict = reports.Failed
	suites := decodeJUnit(t, run)
	testcase := findCase(t, suites, run.Results[0].Scenario, "seed 3")
	if !strings.Contains(testcase.Failure.Description, "]]> <b>&\uFFFD\uFFFD\uFFFD end") {
		t.Errorf("hostile text did not survive as text: %q", testcase.Failure.Description)
	}
}

func findCase(t *testing.T, suites reporters.JUnitTestSuites, scenario, name string) reporters.JUnitTestCase {
	t.Helper()
	for _, suite := range suites.TestSuites {
		for _, testcase := range suite.TestCases {
			if suite.Name == scenario && testcase.Name == name {
				return testcase
			}
		}
	}
	t.Fatalf("no test case %s / %s", scenario, name)
	return reporters.JUnitTestCase{}
}
