package reports_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/reportstest"
)

var writers = []struct {
	name  string
	write func(io.Writer, reports.Run) error
}{
	{"junit", reports.WriteJUnit},
	{"json", reports.WriteJSON},
	{"html", reports.WriteHTML},
}

func render(t testing.TB, write func(io.Writer, reports.Run) error, run reports.Run) string {
	t.Helper()
	var out bytes.Buffer
	if err := write(&out, run); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestSameRunSameBytes: every renderer gives the same bytes for the same
// run, whatever order the bed finished its results in.
func TestSameRunSameBytes(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			first := render(t, w.write, reportstest.SampleRun())
			if again := render(t, w.write, reportstest.SampleRun()); again != first {
				t.Fatal("two renders of the same run differ")
			}
			shuffled := reportstest.SampleRun()
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled.Results), func(i, j int) {
				shuffled.Results[i], shuffled.Results[j] = shuffled.Results[j], shuffled.Results[i]
			})
			if render(t, w.write, shuffled) != first {
				t.Fatal("the order of the results changed the output")
			}
		})
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	page := render(t, reports.WriteHTML, reportstest.SampleRun())
	for _, banned := range []string{"<link", "<img", "<iframe", "<object", "src=", "http://", "https://", "@import"} {
		if strings.Contains(page, banned) {
			t.Errorf("the page contains %q: it must not load anything", banned)
		}
	}
	if urls := regexp.MustCompile(`url\([^)]*\)`).FindAllString(page, -1); len(urls) == 0 || strings.Join(urls, "") != strings.Repeat("url(#arrow)", len(urls)) {
		t.Errorf("CSS urls other than the arrow marker: %v", urls)
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d scripts, want the one that opens and closes details", n)
	}
}

// TestHTMLEscapesEverythingFromTheRun puts markup into every string a bed
// hands over; none of it may reach the page as markup.
func TestHTMLEscapesEverythingFromTheRun(t *testing.T) {
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	run := reportstest.SampleRun()
	run.Name, run.Bed, run.Commit = evil, evil, evil
	for i := range run.Results {
		r := &run.Results[i]
		r.Scenario, r.Replay, r.EventLogHash, r.Error = evil+r.Scenario, evil, evil, evil
		for j := range r.Timeline {
			r.Timeline[j].Detail, r.Timeline[j].Span = evil, evil+r.Timeline[j].Span
		}
		for j := range r.Phases {
			r.Phases[j].Name, r.Phases[j].Note = evil, evil
		}
		for j := range r.Failovers {
			r.Failovers[j].Volume, r.Failovers[j].From = evil, evil
		}
		for j := range r.Chains {
			r.Chains[j].Handle = evil
			for k := range r.Chains[j].Members {
				r.Chains[j].Members[k].Ref, r.Chains[j].Members[k].State = evil, evil
			}
		}
		for j := range r.Violations {
			r.Violations[j].Invariant, r.Violations[j].Message = evil, evil
		}
	}
	page := render(t, reports.WriteHTML, run)
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script in the page, want only ours", n)
	}
	if strings.Contains(page, "<img") {
		t.Error("an <img> from the run reached the page")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the hostile text is not shown escaped")
	}
}

// TestHTMLLargeRunStaysUsable renders a sweep of 1,000 results: every
// failure is listed with its replay command, at most forty get a detail
// section, each scenario gets its passed samples, and the page stays a few
// megabytes.
func TestHTMLLargeRunStaysUsable(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 1,000 results")
	}
	run := reportstest.LargeRun(1000)
	failures := 0
	for _, r := range run.Results {
		if r.Verdict != reports.Passed {
			failures++
		}
	}
	page := render(t, reports.WriteHTML, run)
	if got := strings.Count(page, `<tr class="failure">`); got != failures {
		t.Errorf("failures table has %d rows, want all %d failures", got, failures)
	}
	sections := strings.Count(page, `<section class="result`)
	samples := strings.Count(page, "sample: lowest passed seed") + strings.Count(page, "sample: worst RPO")
	if want := min(failures, 40) + samples; sections != want || samples < 3 || samples > 6 {
		t.Errorf("%d detail sections with %d samples; want %d failures + 3 to 6 samples", sections, samples, min(failures, 40))
	}
	if got := strings.Count(page, `class="seed seed-`); got != 1000 {
		t.Errorf("the seed maps hold %d cells, want one per result", got)
	}
	if len(page) > 8<<20 {
		t.Errorf("the page is %d MiB", len(page)>>20)
	}
	t.Logf("1,000 results: %d failures, %d detail sections, %.1f MiB", failures, sections, float64(len(page))/(1<<20))
}

// A bed that records no sync (the local bed) has its bytes "not measured":
// the summary once read "0 B / 0 B", as if nothing had shipped.
func TestHTMLSaysBytesNotMeasuredWithoutSyncs(t *testing.T) {
	run := reportstest.SampleRun()
	for i := range run.Results {
		run.Results[i].Syncs = nil
	}
	page := render(t, reports.WriteHTML, run)
	if strings.Contains(page, "0 B / 0 B") || !strings.Contains(page, ">not measured<") {
		t.Fatalf("the summary of a run without syncs does not say its bytes were not measured")
	}
	if !strings.Contains(render(t, reports.WriteHTML, reportstest.SampleRun()), " / ") {
		t.Fatal("a run with syncs lost its bytes shipped / changed")
	}
}
