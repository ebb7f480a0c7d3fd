package bed

import (
	"fmt"
	"testing"
	"time"

	"github.com/baton-dr/baton/reports"
)

// A violation carries the WindowEvents events before it, not the later
// ones, and a problem found again at every look is reported once.
func TestJournalWindowsAViolationAndReportsAProblemOnce(t *testing.T) {
	var j Journal
	for i := range WindowEvents + 5 {
		j.Record(reports.Event{Detail: fmt.Sprint(i)})
	}
	at := time.Unix(100, 0)
	j.Violate(at, "chain", "two primaries")
	j.Record(reports.Event{Detail: "after"})
	v := j.Violations()
	if len(v) != 1 || v[0].Invariant != "chain" || !v[0].At.Equal(at) || len(v[0].Window) != WindowEvents ||
		v[0].Window[0].Detail != "5" || v[0].Window[WindowEvents-1].Detail != fmt.Sprint(WindowEvents+4) {
		t.Fatalf("violations %+v", v)
	}
	if n := len(j.Timeline()); n != WindowEvents+6 {
		t.Errorf("timeline of %d events, want %d", n, WindowEvents+6)
	}
	if !j.FirstReport("k") || j.FirstReport("k") || !j.FirstReport("other") {
		t.Error("FirstReport does not say first once per key")
	}
	j.Violations()[0].Invariant = "changed"
	if j.Violations()[0].Invariant != "chain" {
		t.Error("Violations hands out the journal's own slice")
	}
}
