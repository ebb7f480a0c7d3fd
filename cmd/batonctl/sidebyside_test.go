package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
)

// TestSideBySideKeepsEachLineAndSummaryWhole: two scenarios run at once,
// each writing its progress in pieces while the other writes; every line
// reaches progress whole, behind its scenario's name, a line never ended
// included, each summary reaches out in one piece, and the results come in
// the scenarios' order, not the order they ended in.
func TestSideBySideKeepsEachLineAndSummaryWhole(t *testing.T) {
	selected := []scenarios.Scenario{{Name: "wordpress/failover"}, {Name: "gitea/relocate"}}
	started := make(chan struct{})
	var progress, out bytes.Buffer
	results := sideBySide(selected, &progress, &out, func(sc scenarios.Scenario, log, w io.Writer) reports.Result {
		if sc.Name == "gitea/relocate" {
			close(started)
		} else {
			<-started // both are running
		}
		for i := range 50 {
			log.Write([]byte(sc.Name + " says"))
			log.Write([]byte(" part " + strings.Repeat("x", i) + "\n"))
		}
		log.Write([]byte("unended"))
		w.Write([]byte(sc.Name + ": ran\n"))
		return reports.Result{Scenario: sc.Name, Verdict: reports.Passed, Duration: time.Second}
	})
	if len(results) != 2 || results[0].Scenario != "wordpress/failover" || results[1].Scenario != "gitea/relocate" {
		t.Fatalf("results %+v", results)
	}
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	if len(lines) != 102 {
		t.Fatalf("%d lines of progress, want 102:\n%s", len(lines), progress.String())
	}
	for _, line := range lines {
		name, rest, ok := strings.Cut(line, " | ")
		if !ok || (rest != "unended" && !strings.HasPrefix(rest, name+" says part ")) {
			t.Errorf("a line not whole or not its scenario's: %q", line)
		}
	}
	for _, sc := range selected {
		summary := sc.Name + ": ran\n"
		if i := strings.Index(out.String(), summary); i < 0 || !strings.HasPrefix(out.String()[i+len(summary):], sc.Name+" seed") {
			t.Errorf("%s's summary is not in one piece:\n%s", sc.Name, out.String())
		}
	}
}

// TestSideBySideIsTheRealBedsOnly: the simulation and the local bed run one
// scenario at a time; asking them for --side-by-side is refused, naming the
// bed, before anything runs.
func TestSideBySideIsTheRealBedsOnly(t *testing.T) {
	for _, bedName := range []string{"sim", "local"} {
		_, err := runBatonctl(t, time.Now(), "scenario", "run", "wordpress/protect", "--bed", bedName, "--side-by-side")
		if err == nil || !strings.Contains(err.Error(), "--side-by-side is for --bed real: the "+bedName+" bed") {
			t.Errorf("--bed %s --side-by-side: %v", bedName, err)
		}
	}
}

// A run held up by the cuts of the runs beside it says so under its phases,
// so that a reader of make realbed's output sees why a move took long and
// that the wait did not count against it (issue 40).
func TestPrintResultSaysHowLongTheRunWasHeldBeside(t *testing.T) {
	var out strings.Builder
	printResult(&out, reports.Result{Scenario: "gitea/relocate", Seed: 1, Verdict: reports.Passed, HeldBeside: 184300 * time.Millisecond})
	if want := "held 3m4s by the faults of the runs beside it"; !strings.Contains(out.String(), want) {
		t.Errorf("printResult wrote %q, want a line with %q", out.String(), want)
	}
	out.Reset()
	printResult(&out, reports.Result{Scenario: "gitea/relocate", Seed: 1, Verdict: reports.Passed})
	if strings.Contains(out.String(), "held") {
		t.Errorf("a run never held beside printed %q", out.String())
	}
}
