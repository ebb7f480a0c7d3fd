package reportstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/baton-dr/baton/reports"
)

// ErrNoChromium is returned by findChromium when no Chromium binary is
// installed.
var ErrNoChromium = errors.New("reportstest: no chromium binary (apt-get install -y chromium)")

// chromiumCandidates are the binaries findChromium tries, Debian's first.
var chromiumCandidates = []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "headless_shell"}

// findChromium returns the path of an installed Chromium.
func findChromium() (string, error) {
	for _, name := range chromiumCandidates {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", ErrNoChromium
}

// Page is what a page did while it loaded in headless Chromium, and after.
type Page struct {
	// URL is the address the tab was opened at.
	URL string

	mu       sync.Mutex
	problems []string
	requests []string
}

// Problems lists the uncaught exceptions, console errors (console.error and
// console.assert calls, the browser's own error log entries) and dialogs of
// the page; a page that behaves has none.
func (p *Page) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.problems...)
}

// Requests are the URLs the page asked for, the page itself included.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// OpenInChromium writes run's report into a temporary directory and opens
// its report.html in headless Chromium at 1280x900. It fails the test when
// the page does not load (by the test's own deadline: see browserDeadline),
// and marks it failed when the page misbehaved (a script or console error,
// a dialog). It returns the tab's chromedp context, whose actions have the
// same deadline, and the page.
func OpenInChromium(t *testing.T, run reports.Run) (context.Context, *Page) {
	t.Helper()
	dir := t.TempDir()
	if err := reports.WriteRunDir(dir, run); err != nil {
		t.Fatal(err)
	}
	tab, page := openInChromium(t, "file://"+filepath.Join(dir, reports.HTMLName))
	if problems := page.Problems(); len(problems) > 0 {
		t.Errorf("the page misbehaved: %q", problems)
	}
	return tab, page
}

// openInChromium opens url in a new headless Chromium at 1280x900 and waits
// for its load event, recording what the page does from the start.
func openInChromium(t *testing.T, url string) (context.Context, *Page) {
	t.Helper()
	tab := startChromium(t)
	opened := &Page{URL: url}
	if err := chromedp.Listen(tab, func(event any) { opened.record(tab, event) }); err != nil {
		t.Fatal(err)
	}
	loading := time.Now()
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(url)); err != nil {
		t.Fatalf("failed to load %s in %v: %v", url, time.Since(loading).Round(time.Millisecond), err)
	}
	return tab, opened
}

// Screenshot captures a band of the tab's page as PNG, beyond the viewport:
// from topPx down heightPx CSS pixels, or to the page's end if nearer.
func Screenshot(tab context.Context, topPx, heightPx float64) ([]byte, error) {
	if topPx < 0 || heightPx <= 0 {
		panic("reportstest: Screenshot needs a band inside the page")
	}
	metrics, err := chromedp.Call(tab, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	size := metrics.CSSContentSize
	heightPx = min(heightPx, math.Ceil(size.Height)-topPx)
	if heightPx < 1 {
		return nil, fmt.Errorf("the page is %.0f px tall: nothing below %.0f px", size.Height, topPx)
	}
	clip := &page.Viewport{Y: topPx, Width: math.Ceil(size.Width), Height: heightPx, Scale: 1}
	shot, err := chromedp.Call(tab, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatPng, Clip: clip, CaptureBeyondViewport: new(true)})
	if err != nil {
		return nil, err
	}
	return shot.Data, nil
}

// record keeps what an event says about the page. It runs on the tab's
// reading goroutine, before any command answered after the event returns.
func (p *Page) record(tab context.Context, event any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch event := event.(type) {
	case *runtime.EventExceptionThrown:
		details := event.ExceptionDetails
		text := details.Text
		if details.Exception != nil {
			text += " " + details.Exception.Description
		}
		p.problems = append(p.problems, fmt.Sprintf("%s (%s:%d)", text, details.URL, details.LineNumber+1))
	case *runtime.EventConsoleAPICalled:
		if event.Type == runtime.ConsoleAPICalledTypeError || event.Type == runtime.ConsoleAPICalledTypeAssert {
			p.problems = append(p.problems, "console."+string(event.Type)+": "+consoleText(event.Args))
		}
	case *log.EventEntryAdded:
		if event.Entry.Level == log.EntryLevelError {
			p.problems = append(p.problems, strings.TrimSpace(event.Entry.Text+" "+event.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, event.Request.URL)
	case *page.EventJavascriptDialogOpening:
		p.problems = append(p.problems, "dialog: "+event.Message)
		// A dialog stops the page's scripts until it is answered, and a
		// listener must not send a command itself.
		go chromedp.Call(tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}
}

// consoleText joins a console call's arguments: a primitive's value, another
// object's description.
func consoleText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, arg := range args {
		var value any
		if arg.Description == "" && json.Unmarshal(arg.Value, &value) == nil {
			parts = append(parts, fmt.Sprint(value))
		} else {
			parts = append(parts, arg.Description)
		}
	}
	return strings.Join(parts, " ")
}

// noDeadlineBound bounds a browser's work in a test run without a deadline
// (go test -timeout 0).
const noDeadlineBound = 10 * time.Minute

// browserDeadline is when the browser of t must have started, loaded its page
// and answered: the test's own deadline, less stopBound to stop the browser
// and say what went wrong. A fixed bound of seconds failed these tests on
// this machine when it was loaded (30 to 90 on 2 cores), where Chromium can
// take minutes to start.
func browserDeadline(t *testing.T) time.Time {
	if deadline, ok := t.Deadline(); ok {
		return deadline.Add(-stopBound)
	}
	return time.Now().Add(noDeadlineBound)
}

// startChromium starts a headless Chromium for t and returns the context of
// its first tab, whose actions end at browserDeadline(t). The browser runs
// in a process group of its own: when t ends the group is killed, and t
// fails naming any process of it still alive. (chromedp kills the helpers
// -- zygotes, renderers, gpu, utilities -- by their --user-data-dir
// argument, and misses them: each rewrites its command line into one
// string.) Without Chromium installed the test fails (CI installs it; see
// ci/packages.sh) -- except under -short, where it is skipped, as kind
// skips its integration tests.
func startChromium(t *testing.T) context.Context {
	t.Helper()
	path, err := findChromium()
	if errors.Is(err, ErrNoChromium) && testing.Short() {
		t.Skip("no chromium installed; skipped under -short")
	}
	if err != nil {
		t.Fatal(err)
	}
	deadline := browserDeadline(t)
	ctx, cancelDeadline := context.WithDeadline(context.Background(), deadline)
	var browser *exec.Cmd
	ownGroup := func(cmd *exec.Cmd) {
		// Pdeathsig is what chromedp sets without this func: the kernel
		// kills the browser if the test binary dies first.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		browser = cmd
	}
	// chromedp's defaults run Chromium headless, without its background
	// networking; the rest keep it off the network and quiet on a machine
	// without internet (it would dial Google's hosts and log the refusals)
	// and lay pages out without scrollbars.
	options := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true), chromedp.ModifyCmdFunc(ownGroup))
	allocator, cancelAllocator := chromedp.NewExecAllocator(ctx, options...)
	tab, cancelTab := chromedp.NewContext(allocator)
	t.Cleanup(func() {
		// The allocator's cancel kills the browser and waits for it; the
		// helpers it forked may outlive it, so the group goes too. The
		// allocation ran on this goroutine and is over: browser.Process
		// is settled (nil when the start failed before the process ran).
		cancelTab()
		cancelAllocator()
		cancelDeadline()
		if browser == nil || browser.Process == nil {
			return
		}
		group, killed := browser.Process.Pid, time.Now()
		if err := killGroup(group); err != nil {
			t.Error(err)
		}
		if err := awaitGroupGone(group, killed.Add(stopBound)); err != nil {
			t.Errorf("chromium left processes behind %v after killing its group: %v", time.Since(killed).Round(time.Millisecond), err)
		}
	})
	started := time.Now()
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("chromium (%s) did not start in %v, its bound being %s: %v",
			path, time.Since(started).Round(time.Millisecond), deadline.Format(time.TimeOnly), err)
	}
	t.Logf("chromium started in %v", time.Since(started).Round(time.Millisecond))
	return tab
}
