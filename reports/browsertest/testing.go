package browsertest

import (
	"errors"
	"testing"
)

// New starts a headless Chromium for t and closes it when t ends, failing t
// if any process of the browser is left behind. Without Chromium installed
// the test fails (CI installs it; see .ci/run) -- except under -short, where
// it is skipped, as kind skips its integration tests.
func New(t testing.TB) *Browser {
	t.Helper()
	path, err := Find()
	if errors.Is(err, ErrNoChromium) && testing.Short() {
		t.Skip("no chromium installed; skipped under -short")
	}
	if err != nil {
		t.Fatal(err)
	}
	browser, err := Start(path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-in first-out: this one runs before t.TempDir's
	// removal, so the profile is not deleted under a live browser.
	t.Cleanup(func() {
		if err := browser.Close(); err != nil {
			t.Error(err)
		}
		left, err := browser.Leftovers()
		if err != nil {
			t.Error(err)
		}
		if len(left) > 0 {
			t.Errorf("chromium processes left behind in group %d: %v", browser.ProcessGroup(), left)
		}
	})
	return browser
}
