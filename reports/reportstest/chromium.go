package reportstest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/browsertest"
)

// OpenInChromium writes run's report into a temporary directory and opens
// its report.html in headless Chromium at 1280x900, by deadline. It fails
// the test when the page does not load, and marks it failed when the page
// misbehaved (a script or console error). It returns the page and its URL.
func OpenInChromium(t testing.TB, run reports.Run, deadline time.Time) (*browsertest.Page, string) {
	t.Helper()
	dir := t.TempDir()
	if err := reports.WriteRunDir(dir, run); err != nil {
		t.Fatal(err)
	}
	browser := browsertest.New(t)
	url := "file://" + filepath.Join(dir, reports.HTMLName)
	page, err := browser.Open(url, browsertest.Viewport{WidthPx: 1280, HeightPx: 900}, deadline)
	if err != nil {
		t.Fatalf("%v\n%s", err, browser.Output())
	}
	if problems := page.Problems(); len(problems) > 0 {
		t.Errorf("the page misbehaved: %q", problems)
	}
	return page, url
}
