package browsertest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A page that misbehaves in every way the helper must notice.
const misbehaving = `<!doctype html><html><head><title>t</title></head><body>
<p id="p">hello</p>
<img src="http://127.0.0.1:9/missing.png">
<script>console.error("boom", 42);</script>
<script>alert("hi");</script>
<script>document.getElementById("p").dataset.ran = "yes"; undefinedFunction();</script>
</body></html>`

func TestBrowserSeesWhatThePageDid(t *testing.T) {
	browser := New(t)
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, []byte(misbehaving), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	page, err := browser.Open("file://"+path, Viewport{WidthPx: 800, HeightPx: 600}, deadline)
	if err != nil {
		t.Fatalf("%v\n%s", err, browser.Output())
	}
	if len(page.Exceptions) != 1 || !strings.Contains(page.Exceptions[0], "undefinedFunction") {
		t.Errorf("exceptions = %q, want the one ReferenceError", page.Exceptions)
	}
	if !slices.ContainsFunc(page.ConsoleErrors, func(s string) bool { return strings.Contains(s, "console.error: boom 42") }) {
		t.Errorf("console errors = %q, want console.error: boom 42", page.ConsoleErrors)
	}
	if !slices.Equal(page.Dialogs, []string{"hi"}) {
		t.Errorf("dialogs = %q, want [hi]", page.Dialogs)
	}
	if !slices.Contains(page.Requests, "http://127.0.0.1:9/missing.png") {
		t.Errorf("requests = %q, want the image's", page.Requests)
	}
	var ran string
	if err := page.Eval(`document.getElementById("p").dataset.ran`, &ran, deadline); err != nil || ran != "yes" {
		t.Errorf("eval = %q, %v; want yes (scripts after the dialog ran)", ran, err)
	}
	if err := page.Eval(`nothing.here`, &ran, deadline); err == nil {
		t.Error("evaluating a throwing expression returned no error")
	}
	png, err := page.Screenshot(0, 0, deadline)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		t.Errorf("screenshot is not a PNG: % x", png[:min(8, len(png))])
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	path, err := Find()
	if err != nil {
		t.Skip(err)
	}
	browser, err := Start(path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	running, err := browser.Leftovers()
	if err != nil || len(running) == 0 {
		t.Fatalf("a running browser's group has no member (%v, %v): the check would prove nothing", running, err)
	}
	if err := browser.Close(); err != nil {
		t.Fatal(err)
	}
	if err := browser.Close(); err != nil {
		t.Errorf("a second Close failed: %v", err)
	}
	if left, err := browser.Leftovers(); err != nil || len(left) > 0 {
		t.Errorf("left behind: %v (%v)", left, err)
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		stat  string
		state string
		group int
		ok    bool
	}{
		{"123 (chromium) S 1 123 123 0", "S", 123, true},
		{"124 (a b) c) (d) Z 123 77 77 0", "Z", 77, true},
		{"125 (x) S 1", "", 0, false},
		{"no parenthesis", "", 0, false},
		{"126 (x) S 1 notanumber", "", 0, false},
	} {
		state, group, ok := parseStat(tc.stat)
		if state != tc.state || group != tc.group || ok != tc.ok {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tc.stat, state, group, ok, tc.state, tc.group, tc.ok)
		}
	}
}

// FuzzParseStat: /proc/<pid>/stat carries a command name the process chose,
// parentheses and spaces included; parsing it must never panic, and a
// parsed line must say the fields that follow the last ')'.
func FuzzParseStat(f *testing.F) {
	f.Add("123 (chromium) S 1 123 123 0")
	f.Add("1 ()) ) Z 0 -1")
	f.Fuzz(func(t *testing.T, stat string) {
		state, group, ok := parseStat(stat)
		if !ok {
			return
		}
		fields := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
		if n, err := strconv.Atoi(fields[2]); err != nil || n != group || fields[0] != state {
			t.Errorf("parseStat(%q) = %q, %d", stat, state, group)
		}
	})
}
