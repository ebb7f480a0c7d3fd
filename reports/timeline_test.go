package reports

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

func TestPairSpans(t *testing.T) {
	events := []Event{
		{At: at(1), Site: "site-a", Kind: EventPartition, Span: "cut", Edge: EdgeBegin, Detail: "cut a"},
		{At: at(2), Site: "site-b", Kind: EventPartition, Span: "cut", Edge: EdgeBegin, Detail: "cut b"},
		{At: at(3), Site: "site-a", Kind: EventWrite, Detail: "w"},
		{At: at(4), Site: "site-a", Kind: EventPartition, Span: "cut", Edge: EdgeEnd, Detail: "heal a"},
		{At: at(5), Site: "hub", Kind: EventAction, Span: "late", Edge: EdgeEnd, Detail: "ended only"},
		{At: at(6), Site: "site-a", Kind: EventPartition, Span: "cut", Edge: EdgeBegin, Detail: "cut a again"},
		{At: at(7), Site: "site-a", Kind: EventAction, Span: "x"}, // a span name without an edge is an instant
	}
	spans, instants := pairSpans(events)
	type got struct {
		site, detail string
		start, end   time.Time
		open         bool
	}
	var gotSpans []got
	for _, s := range spans {
		gotSpans = append(gotSpans, got{s.site, s.detail, s.start, s.end, s.open})
	}
	want := []got{
		{"hub", "ended only", time.Time{}, at(5), false}, // no begin: from the start
		{"site-a", "cut a", at(1), at(4), false},
		{"site-b", "cut b", at(2), time.Time{}, true}, // never healed
		{"site-a", "cut a again", at(6), time.Time{}, true},
	}
	if !slices.Equal(gotSpans, want) {
		t.Errorf("spans:\n got %+v\nwant %+v", gotSpans, want)
	}
	if len(instants) != 2 || instants[0].Kind != EventWrite || instants[1].Span != "x" {
		t.Errorf("instants = %+v", instants)
	}
}

func TestLanes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []Event
		want   []string
	}{
		{"the three fixed lanes always", nil, []string{"site-a", "site-b", "hub"}},
		{"other sites sorted after them", []Event{{Site: "site-d"}, {Site: "site-c"}, {Site: "site-a"}},
			[]string{"site-a", "site-b", "hub", "site-c", "site-d"}},
		{"world partition spans and violations need no lane",
			[]Event{{Kind: EventPartition, Span: "p", Edge: EdgeBegin}, {Kind: EventViolation}}, []string{"site-a", "site-b", "hub"}},
		{"an instant world partition (heal every partition) gets the world lane",
			[]Event{{Kind: EventPartition}}, []string{"site-a", "site-b", "hub", "world"}},
		{"other world events get the world lane", []Event{{Kind: EventFault}},
			[]string{"site-a", "site-b", "hub", "world"}},
	} {
		if got := layoutLanes(Result{Timeline: tc.events}).names; !slices.Equal(got, tc.want) {
			t.Errorf("%s: lanes %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTimelineDrawsTheStory checks the drawing's parts against a small
// result: a partition shaded in its lane, a world partition over all lanes,
// an action as a bar, merged marks, the violation as a line.
func TestTimelineDrawsTheStory(t *testing.T) {
	result := Result{Started: t0, Duration: 100 * time.Second,
		Timeline: []Event{
			{At: at(10), Site: "site-a", Kind: EventPartition, Span: "a", Edge: EdgeBegin},
			{At: at(20), Site: "hub", Kind: EventAction, Span: "f", Edge: EdgeBegin},
			{At: at(30), Site: "site-b", Kind: EventRole, Detail: "promote db"},
			{At: at(30), Site: "site-b", Kind: EventRole, Detail: "promote uploads"},
			{At: at(40), Site: "hub", Kind: EventAction, Span: "f", Edge: EdgeEnd},
			{At: at(50), Site: "site-a", Kind: EventPartition, Span: "a", Edge: EdgeEnd},
			{At: at(60), Kind: EventPartition, Span: "w", Edge: EdgeBegin},
			{At: at(61), Site: "site-a", Kind: EventWrite},
		},
		Violations: []Violation{{At: at(70), Invariant: "chain: x", Message: "y"}},
	}
	view := buildTimeline(result)
	if len(view.Shades) != 2 || view.Shades[0].H != px(laneHeightPx) || view.Shades[1].Y != px(lanesTopPx) {
		t.Errorf("shades = %+v; want site-a's lane, then all lanes", view.Shades)
	}
	if len(view.Spans) != 1 || !strings.Contains(view.Spans[0].Class, "span-action") {
		t.Errorf("spans = %+v", view.Spans)
	}
	if len(view.Marks) != 1 || !strings.Contains(view.Marks[0].Tip, "role ×2\npromote db\npromote uploads") {
		t.Errorf("marks = %+v; want the two promotions merged", view.Marks)
	}
	if len(view.Writes) != 1 || len(view.Violations) != 1 || !strings.Contains(view.Violations[0].Tip, "chain: x: y") {
		t.Errorf("writes %d, violations %+v", len(view.Writes), view.Violations)
	}
	if len(view.Ticks) < 2 || view.Ticks[0].Label != "+0s" {
		t.Errorf("ticks = %+v", view.Ticks)
	}
}

// TestMarksAreBounded: a long chaos run draws a bounded number of marks.
func TestMarksAreBounded(t *testing.T) {
	result := Result{Started: t0, Duration: 8 * time.Hour}
	for i := range 100_000 {
		result.Timeline = append(result.Timeline, Event{At: t0.Add(time.Duration(i) * 288 * time.Millisecond),
			Site: []string{"site-a", "site-b"}[i%2], Kind: []EventKind{EventSync, EventWrite, EventRole}[i%3]})
	}
	view := buildTimeline(result)
	bins := int(timelineWidthPx / markBinPx)
	if len(view.Marks) > 2*2*bins || len(view.Writes) > 2*bins {
		t.Errorf("%d marks and %d write bars for %d bins per lane", len(view.Marks), len(view.Writes), bins)
	}
}
