package browsertest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Page is one tab, attached through its own DevTools session. It records
// what the page did while the test drove it.
type Page struct {
	browser   *Browser
	sessionID string
	// Exceptions are uncaught script errors ("Uncaught TypeError: ...").
	Exceptions []string
	// ConsoleErrors are console.error/console.assert calls and the browser's
	// own error log entries (a failed resource load, a refused script).
	ConsoleErrors []string
	// Dialogs are alert/confirm/prompt messages; each was dismissed.
	Dialogs []string
	// Requests are the URLs the page asked for, the page itself included.
	Requests []string
}

// Viewport is the page's layout width and height in CSS pixels.
type Viewport struct {
	WidthPx  int
	HeightPx int
}

// Open creates a tab of the given viewport, navigates it to url and waits for
// its load event.
func (b *Browser) Open(url string, viewport Viewport, deadline time.Time) (*Page, error) {
	if viewport.WidthPx <= 0 || viewport.HeightPx <= 0 {
		panic("browsertest: Open needs a viewport")
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.conn.call(deadline, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	params := map[string]any{"targetId": target.TargetID, "flatten": true}
	if err := b.conn.call(deadline, "", "Target.attachToTarget", params, &attached); err != nil {
		return nil, err
	}
	page := &Page{browser: b, sessionID: attached.SessionID}
	b.pages[attached.SessionID] = page
	for _, domain := range []string{"Page", "Runtime", "Log", "Network"} {
		if err := page.call(deadline, domain+".enable", nil, nil); err != nil {
			return nil, err
		}
	}
	metrics := map[string]any{"width": viewport.WidthPx, "height": viewport.HeightPx, "deviceScaleFactor": 1, "mobile": false}
	if err := page.call(deadline, "Emulation.setDeviceMetricsOverride", metrics, nil); err != nil {
		return nil, err
	}
	var navigated struct {
		ErrorText string `json:"errorText"`
	}
	if err := page.call(deadline, "Page.navigate", map[string]any{"url": url}, &navigated); err != nil {
		return nil, err
	}
	if navigated.ErrorText != "" {
		return nil, fmt.Errorf("failed to navigate to %s: %s", url, navigated.ErrorText)
	}
	if err := b.conn.waitEvent(deadline, page.sessionID, "Page.loadEventFired"); err != nil {
		return nil, err
	}
	return page, nil
}

// Problems lists the exceptions, console errors and dialogs together; a page
// that behaves has none.
func (p *Page) Problems() []string {
	var all []string
	all = append(all, p.Exceptions...)
	all = append(all, p.ConsoleErrors...)
	for _, dialog := range p.Dialogs {
		all = append(all, "dialog: "+dialog)
	}
	return all
}

// Eval evaluates a JavaScript expression in the page and decodes its value
// (which must be JSON-serialisable) into out.
func (p *Page) Eval(expression string, out any, deadline time.Time) error {
	var evaluated struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *exceptionDetails `json:"exceptionDetails"`
	}
	params := map[string]any{"expression": expression, "returnByValue": true, "awaitPromise": true}
	if err := p.call(deadline, "Runtime.evaluate", params, &evaluated); err != nil {
		return err
	}
	if evaluated.ExceptionDetails != nil {
		return fmt.Errorf("evaluating %q threw: %s", expression, evaluated.ExceptionDetails.describe())
	}
	if len(evaluated.Result.Value) == 0 {
		return errors.New("evaluation returned undefined")
	}
	return json.Unmarshal(evaluated.Result.Value, out)
}

// Screenshot captures a band of the page, beyond the viewport, as PNG: from
// fromYPx down heightPx pixels, or to the page's end when heightPx is 0 or
// reaches past it.
func (p *Page) Screenshot(fromYPx, heightPx int, deadline time.Time) ([]byte, error) {
	if fromYPx < 0 || heightPx < 0 {
		panic("browsertest: Screenshot needs a band inside the page")
	}
	var layout struct {
		ContentSize struct {
			Width  float64 `json:"width"`
			Height float64 `json:"height"`
		} `json:"cssContentSize"`
	}
	if err := p.call(deadline, "Page.getLayoutMetrics", nil, &layout); err != nil {
		return nil, err
	}
	height := math.Ceil(layout.ContentSize.Height) - float64(fromYPx)
	if heightPx > 0 {
		height = math.Min(height, float64(heightPx))
	}
	if height < 1 {
		return nil, fmt.Errorf("the page is %.0f px tall: nothing below %d px", layout.ContentSize.Height, fromYPx)
	}
	clip := map[string]any{"x": 0, "y": fromYPx, "width": math.Ceil(layout.ContentSize.Width), "height": height, "scale": 1}
	var shot struct {
		Data string `json:"data"`
	}
	params := map[string]any{"format": "png", "captureBeyondViewport": true, "clip": clip}
	if err := p.call(deadline, "Page.captureScreenshot", params, &shot); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(shot.Data)
}

func (p *Page) call(deadline time.Time, method string, params, result any) error {
	return p.browser.conn.call(deadline, p.sessionID, method, params, result)
}

// record keeps what an event says about the page's health.
func (p *Page) record(event message) {
	switch event.Method {
	case "Runtime.exceptionThrown":
		var thrown struct {
			Details exceptionDetails `json:"exceptionDetails"`
		}
		if json.Unmarshal(event.Params, &thrown) == nil {
			p.Exceptions = append(p.Exceptions, thrown.Details.describe())
		}
	case "Runtime.consoleAPICalled":
		var called struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		if json.Unmarshal(event.Params, &called) == nil && (called.Type == "error" || called.Type == "assert") {
			parts := make([]string, 0, len(called.Args))
			for _, arg := range called.Args {
				if arg.Description != "" {
					parts = append(parts, arg.Description)
				} else {
					parts = append(parts, fmt.Sprint(arg.Value))
				}
			}
			p.ConsoleErrors = append(p.ConsoleErrors, "console."+called.Type+": "+strings.Join(parts, " "))
		}
	case "Log.entryAdded":
		var added struct {
			Entry struct {
				Level string `json:"level"`
				Text  string `json:"text"`
				URL   string `json:"url"`
			} `json:"entry"`
		}
		if json.Unmarshal(event.Params, &added) == nil && added.Entry.Level == "error" {
			p.ConsoleErrors = append(p.ConsoleErrors, strings.TrimSpace(added.Entry.Text+" "+added.Entry.URL))
		}
	case "Network.requestWillBeSent":
		var sent struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		if json.Unmarshal(event.Params, &sent) == nil {
			p.Requests = append(p.Requests, sent.Request.URL)
		}
	case "Page.javascriptDialogOpening":
		var opened struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(event.Params, &opened) == nil {
			p.Dialogs = append(p.Dialogs, opened.Message)
		}
		// A dialog blocks the page's scripts until answered; answer without
		// waiting, since this runs inside another call's read loop.
		p.browser.conn.send(p.sessionID, "Page.handleJavaScriptDialog", map[string]any{"accept": false})
	}
}

// exceptionDetails is the protocol's description of a thrown exception.
type exceptionDetails struct {
	Text       string `json:"text"`
	URL        string `json:"url"`
	LineNumber int    `json:"lineNumber"`
	Exception  *struct {
		Description string `json:"description"`
	} `json:"exception"`
}

func (d exceptionDetails) describe() string {
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		text += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", text, d.URL, d.LineNumber+1)
}
