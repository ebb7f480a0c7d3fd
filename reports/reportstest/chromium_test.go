package reportstest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A page that misbehaves in every way OpenInChromium must notice.
const misbehaving = `<!doctype html><html><head><title>t</title></head><body>
<p id="p">hello</p>
<img src="http://127.0.0.1:9/missing.png">
<script>console.error("boom", 42);</script>
<script>alert("hi");</script>
<script>document.getElementById("p").dataset.ran = "yes"; undefinedFunction();</script>
</body></html>`

func TestChromiumSeesWhatThePageDid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, []byte(misbehaving), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, opened := openInChromium(t, "file://"+path)
	problems := opened.Problems()
	count := func(prefix, part string) int {
		n := 0
		for _, p := range problems {
			if strings.HasPrefix(p, prefix) && strings.Contains(p, part) {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		what, prefix, part string
		want               int
	}{
		{"the ReferenceError", "Uncaught", "undefinedFunction", 1},
		{"the console error", "console.error: boom 42", "", 1},
		{"the dialog", "dialog: hi", "", 1},
	} {
		if got := count(c.prefix, c.part); got != c.want {
			t.Errorf("problems = %q: %d of %s, want %d", problems, got, c.what, c.want)
		}
	}
	if requests := opened.Requests(); !slices.Contains(requests, "http://127.0.0.1:9/missing.png") {
		t.Errorf("requests = %q, want the image's", requests)
	}
	ran, err := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("p").dataset.ran`))
	if err != nil || ran != "yes" {
		t.Errorf("eval = %q, %v; want yes (scripts after the dialog ran)", ran, err)
	}
	if _, err := chromedp.Run(tab, chromedp.Evaluate[string](`nothing.here`)); err == nil {
		t.Error("evaluating a throwing expression returned no error")
	}
	png, err := Screenshot(tab, 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		t.Errorf("screenshot is not a PNG: % x", png[:min(8, len(png))])
	}
}

// The leftover check of startChromium's cleanup must see a running browser's
// helpers in its group, or its silence after the cleanup would prove nothing.
func TestChromiumLeavesNoProcess(t *testing.T) {
	var group int
	t.Run("browser", func(t *testing.T) {
		tab := startChromium(t)
		group = chromedp.FromContext(tab).Browser.Process().Pid
		members, err := groupMembers(group)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("group %d: %q", group, members)
		if !slices.ContainsFunc(members, func(m string) bool { return strings.Contains(m, "--type=") }) {
			t.Errorf("no helper (--type=) in the running browser's group %d: %q; the check would miss them", group, members)
		}
	})
	if group == 0 {
		t.Skip("no browser started")
	}
	if left, err := groupMembers(group); err != nil || len(left) > 0 {
		t.Errorf("left behind: %q (%v)", left, err)
	}
}
