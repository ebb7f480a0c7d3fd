package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Geometry of a timeline drawing, in SVG user units (the drawing scales to
// the page's width).
const (
	timelineWidthPx  = 1000.0
	timelineLeftPx   = 78.0 // lane labels
	timelineRightPx  = 14.0
	phaseBandTopPx   = 4.0
	phaseBandPx      = 18.0
	lanesTopPx       = 28.0
	laneHeightPx     = 50.0
	laneGapPx        = 4.0
	axisPx           = 22.0
	markBinPx        = 4.0  // marks of one kind closer than this merge into one
	writeBarMaxPx    = 12.0 // tallest write-density bar
	tipDetailsMax    = 4    // details listed in a merged mark's tooltip
	phaseLabelCharPx = 6.2  // estimated width of a phase label's character
)

// fixedLanes are always drawn, in this order; other sites follow sorted,
// then the world lane when events without a site need one.
var fixedLanes = []string{"site-a", "site-b", "hub"}

const worldLane = "world"

// timelineView is one result's timeline, ready for the template: every
// number already a formatted coordinate.
type timelineView struct {
	Width, Height string
	Lanes         []laneView
	Phases        []rectView
	Shades        []rectView // partitions
	Spans         []rectView // DR actions and other intervals
	Writes        []rectView // write density
	Marks         []markView
	Violations    []violationLineView
	Ticks         []tickView
	AxisY         string
	PlotLeft      string
	PlotRight     string
	PlotWidth     string
}

type laneView struct {
	Name, Y, Height, LabelY, MidY string
}

type rectView struct {
	X, Y, W, H, Class, Label, LabelX, LabelY, Tip string
}

// markView is a symbol at a point; Shape picks the SVG element.
type markView struct {
	Shape, Class, X, Y, Path, Tip string
}

type violationLineView struct {
	X, Y1, Y2, Marker, Tip string
}

type tickView struct {
	X, Label string
}

// laneLayout places the lanes of one result.
type laneLayout struct {
	names []string
	index map[string]int
}

func layoutLanes(result Result) laneLayout {
	var extra []string
	world := false
	for _, e := range result.Timeline {
		switch {
		case e.Site == "":
			// World partition spans shade every lane and world violations
			// are drawn across all lanes; anything else -- an instant world
			// partition such as "heal every partition" included -- needs
			// its own lane.
			if e.Kind != EventViolation && !(e.Kind == EventPartition && e.Span != "") {
				world = true
			}
		case !slices.Contains(fixedLanes, e.Site) && !slices.Contains(extra, e.Site):
			extra = append(extra, e.Site)
		}
	}
	slices.Sort(extra)
	names := append(slices.Clone(fixedLanes), extra...)
	if world {
		names = append(names, worldLane)
	}
	layout := laneLayout{names: names, index: map[string]int{}}
	for i, name := range names {
		layout.index[name] = i
	}
	return layout
}

func (l laneLayout) top(lane int) float64 {
	return lanesTopPx + float64(lane)*(laneHeightPx+laneGapPx)
}

func (l laneLayout) bottom() float64 {
	return l.top(len(l.names)) - laneGapPx
}

// lane returns the lane index of a site ("" is the world lane).
func (l laneLayout) lane(site string) int {
	if site == "" {
		site = worldLane
	}
	lane, ok := l.index[site]
	if !ok {
		panic(fmt.Sprintf("reports: no lane for site %q", site))
	}
	return lane
}

// resultEnd is the last instant a result's drawing must show.
func resultEnd(result Result) time.Time {
	end := origin(result).Add(result.Duration)
	for _, e := range result.Timeline {
		end = later(end, e.At)
	}
	for _, p := range result.Phases {
		end = later(end, p.End)
	}
	for _, v := range result.Violations {
		end = later(end, v.At)
	}
	return end
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// buildTimeline draws one result's timeline.
func buildTimeline(result Result) timelineView {
	lanes := layoutLanes(result)
	start := origin(result)
	end := resultEnd(result)
	// A little room after the last instant, so that a violation at the very
	// end (where a failed run stops) is not drawn on the frame.
	end = end.Add(end.Sub(start) / 50)
	scale := newTimeScale(start, end, timelineLeftPx, timelineWidthPx-timelineLeftPx-timelineRightPx)
	height := lanes.bottom() + axisPx
	view := timelineView{Width: px(timelineWidthPx), Height: px(height), AxisY: px(lanes.bottom() + 15),
		PlotLeft: px(timelineLeftPx), PlotRight: px(timelineWidthPx - timelineRightPx),
		PlotWidth: px(timelineWidthPx - timelineLeftPx - timelineRightPx)}
	for i, name := range lanes.names {
		top := lanes.top(i)
		view.Lanes = append(view.Lanes, laneView{Name: name, Y: px(top), Height: px(laneHeightPx),
			LabelY: px(top + laneHeightPx/2 + 4), MidY: px(top + laneHeightPx/2)})
	}
	view.Phases = phaseRects(result, scale)
	spans, instants := pairSpans(result.Timeline)
	for _, s := range spans {
		shade, isShade := spanRect(result, s, scale, lanes)
		if isShade {
			view.Shades = append(view.Shades, shade)
		} else {
			view.Spans = append(view.Spans, shade)
		}
	}
	view.Writes = writeBars(result, instants, scale, lanes)
	view.Marks = eventMarks(result, instants, scale, lanes)
	for _, v := range result.Violations {
		x := px(scale.x(v.At))
		view.Violations = append(view.Violations, violationLineView{X: x, Y1: px(phaseBandTopPx), Y2: px(lanes.bottom()),
			Marker: trianglePath(scale.x(v.At), lanesTopPx-1, 5),
			Tip:    fmt.Sprintf("%s %s: %s", formatOffset(offset(result, v.At)), v.Invariant, v.Message)})
	}
	for _, t := range timeTicks(scale.end.Sub(scale.start)) {
		view.Ticks = append(view.Ticks, tickView{X: px(scale.x(start.Add(t))), Label: formatOffset(t)})
	}
	return view
}

// phaseRects draws the scenario's phases as a band above the lanes; a name
// is written inside when it fits, and is always in the tooltip.
func phaseRects(result Result, scale timeScale) []rectView {
	var rects []rectView
	for i, phase := range result.Phases {
		x1, x2 := scale.x(phase.Start), scale.x(phase.End)
		width := max(x2-x1, 1)
		class := "phase phase-" + []string{"even", "odd"}[i%2]
		if !phase.OK {
			class = "phase phase-failed"
		}
		tip := fmt.Sprintf("%s: %s for %s", phase.Name, formatOffset(offset(result, phase.Start)),
			formatDuration(phase.End.Sub(phase.Start)))
		if !phase.OK {
			tip += " (failed)"
		}
		if phase.Note != "" {
			tip += " -- " + phase.Note
		}
		rect := rectView{X: px(x1), Y: px(phaseBandTopPx), W: px(width), H: px(phaseBandPx), Class: class, Tip: tip}
		if float64(len(phase.Name))*phaseLabelCharPx+6 < width {
			rect.Label, rect.LabelX, rect.LabelY = phase.Name, px(x1+3), px(phaseBandTopPx+phaseBandPx-5)
		}
		rects = append(rects, rect)
	}
	return rects
}

// span is an interval of the timeline: a partition, a DR action.
type span struct {
	site   string
	kind   EventKind
	detail string
	start  time.Time
	end    time.Time
	open   bool // no end recorded: lasts to the end of the result
	ended  string
}

// pairSpans matches the begin and end events of each Span (by site, kind and
// span name) and returns the intervals, ordered by start, and the remaining
// instant events. An end without a begin starts at the result's beginning.
func pairSpans(events []Event) ([]span, []Event) {
	type key struct {
		site, span string
		kind       EventKind
	}
	var spans []span
	var instants []Event
	open := map[key]int{} // index into spans of the open interval
	for _, e := range events {
		k := key{site: e.Site, span: e.Span, kind: e.Kind}
		switch {
		case e.Span == "" || e.Edge == EdgeNone:
			instants = append(instants, e)
		case e.Edge == EdgeBegin:
			open[k] = len(spans)
			spans = append(spans, span{site: e.Site, kind: e.Kind, detail: e.Detail, start: e.At, open: true})
		default:
			if i, ok := open[k]; ok {
				spans[i].end, spans[i].open, spans[i].ended = e.At, false, e.Detail
				delete(open, k)
				continue
			}
			spans = append(spans, span{site: e.Site, kind: e.Kind, detail: e.Detail, end: e.At, ended: e.Detail})
		}
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start.Compare(b.start) })
	return spans, instants
}

// spanRect draws an interval: partitions shade their lane (every lane for
// the world), other intervals are a bar at the top of their lane.
func spanRect(result Result, s span, scale timeScale, lanes laneLayout) (rectView, bool) {
	start := s.start
	if start.IsZero() {
		start = scale.start
	}
	end := s.end
	if s.open {
		end = scale.end
	}
	x1, x2 := scale.x(start), scale.x(end)
	tip := fmt.Sprintf("%s %s -> %s (%s): %s", s.kind, formatOffset(offset(result, start)),
		formatOffset(offset(result, end)), formatDuration(end.Sub(start)), s.detail)
	if s.open {
		tip += "; never ended"
	} else if s.ended != "" {
		tip += "; " + s.ended
	}
	if s.kind == EventPartition {
		y1, y2 := lanesTopPx, lanes.bottom()
		if s.site != "" {
			lane := lanes.lane(s.site)
			y1, y2 = lanes.top(lane), lanes.top(lane)+laneHeightPx
		}
		return rectView{X: px(x1), Y: px(y1), W: px(max(x2-x1, 1)), H: px(y2 - y1), Class: "shade-partition", Tip: tip}, true
	}
	top := lanes.top(lanes.lane(s.site))
	return rectView{X: px(x1), Y: px(top + 3), W: px(max(x2-x1, 2)), H: "5", Class: "span span-" + kindClass(s.kind), Tip: tip}, false
}

// markBin identifies the marks that merge: one lane, one kind, one bin.
type markBin struct {
	lane int
	kind EventKind
	bin  int
}

// markGroup is the events merged into one mark.
type markGroup struct {
	markBin
	first   time.Time
	count   int
	details []string
}

// groupMarks merges the instants of each kind in each lane into bins of
// markBinPx, so that a long run draws at most a few hundred marks per lane.
func groupMarks(events []Event, scale timeScale, lanes laneLayout, keep func(Event) bool) []markGroup {
	index := map[markBin]int{}
	var groups []markGroup
	for _, e := range events {
		if !keep(e) {
			continue
		}
		bin := markBin{lane: lanes.lane(e.Site), kind: e.Kind, bin: int((scale.x(e.At) - timelineLeftPx) / markBinPx)}
		i, ok := index[bin]
		if !ok {
			i = len(groups)
			index[bin] = i
			groups = append(groups, markGroup{markBin: bin, first: e.At})
		}
		groups[i].count++
		if len(groups[i].details) < tipDetailsMax {
			groups[i].details = append(groups[i].details, e.Detail)
		}
	}
	slices.SortStableFunc(groups, func(a, b markGroup) int {
		return cmp.Or(cmp.Compare(a.lane, b.lane), cmp.Compare(a.bin, b.bin), cmp.Compare(a.kind, b.kind))
	})
	return groups
}

// writeBars draws write activity as a density strip at the bottom of each
// lane: one bar per bin, its height the bin's share of the busiest bin.
func writeBars(result Result, events []Event, scale timeScale, lanes laneLayout) []rectView {
	groups := groupMarks(events, scale, lanes, func(e Event) bool { return e.Kind == EventWrite })
	busiest := 0
	for _, g := range groups {
		busiest = max(busiest, g.count)
	}
	bars := make([]rectView, 0, len(groups))
	for _, g := range groups {
		height := max(writeBarMaxPx*float64(g.count)/float64(busiest), 1.5)
		bottom := lanes.top(g.lane) + laneHeightPx - 2
		bars = append(bars, rectView{X: px(timelineLeftPx + float64(g.bin)*markBinPx), Y: px(bottom - height),
			W: px(markBinPx - 1), H: px(height), Class: "write", Tip: groupTip(result, g)})
	}
	return bars
}

// markRows places each kind of mark at its height within a lane.
var markRows = map[EventKind]float64{
	EventRole: 17, EventAction: 17, EventFault: 17, EventPartition: 17, EventViolation: 17, EventSync: 29,
	EventDiskFull: 17, EventAPIError: 17,
}

// eventMarks draws every instant that is not a write as a symbol.
func eventMarks(result Result, events []Event, scale timeScale, lanes laneLayout) []markView {
	groups := groupMarks(events, scale, lanes, func(e Event) bool {
		// World violations are drawn as lines across every lane.
		return e.Kind != EventWrite && !(e.Kind == EventViolation && e.Site == "")
	})
	marks := make([]markView, 0, len(groups))
	for _, g := range groups {
		x := timelineLeftPx + (float64(g.bin)+0.5)*markBinPx
		row, known := markRows[g.kind]
		if !known {
			row = 29
		}
		y := lanes.top(g.lane) + row
		mark := markView{Class: "mark mark-" + kindClass(g.kind), X: px(x), Y: px(y), Tip: groupTip(result, g)}
		switch g.kind {
		case EventSync:
			mark.Shape = "circle"
		case EventRole:
			mark.Shape, mark.Path = "path", diamondPath(x, y, 5.5)
		case EventFault:
			mark.Shape, mark.Path = "path", crossPath(x, y, 4)
		case EventViolation:
			mark.Shape, mark.Path = "path", trianglePath(x, y-5, 5)
		case EventPartition:
			mark.Shape, mark.Path = "path", fmt.Sprintf("M%s %sV%s", px(x), px(y-8), px(y+8))
		case EventDiskFull:
			mark.Shape, mark.Path = "path", squarePath(x, y, 4.5)
		case EventAPIError:
			mark.Shape, mark.Path = "path", diamondPath(x, y, 4.5)
		default:
			mark.Shape, mark.Path = "path", squarePath(x, y, 3.5)
		}
		marks = append(marks, mark)
	}
	return marks
}

// groupTip is a merged mark's tooltip: when, how many, and the first few.
func groupTip(result Result, g markGroup) string {
	var tip strings.Builder
	fmt.Fprintf(&tip, "%s %s", formatOffset(offset(result, g.first)), g.kind)
	if g.count > 1 {
		fmt.Fprintf(&tip, " ×%d", g.count)
	}
	for _, detail := range g.details {
		tip.WriteString("\n" + detail)
	}
	if more := g.count - len(g.details); more > 0 {
		fmt.Fprintf(&tip, "\n... and %d more", more)
	}
	return tip.String()
}

// kindClass is the CSS class suffix of an event kind; kinds the renderer
// does not know share one class, so no outside string reaches a class name.
func kindClass(kind EventKind) string {
	switch kind {
	case EventWrite, EventSync, EventPartition, EventRole, EventAction, EventFault, EventViolation:
		return string(kind)
	case EventDiskFull:
		return "disk"
	case EventAPIError:
		return "api"
	}
	return "other"
}

func diamondPath(x, y, r float64) string {
	return fmt.Sprintf("M%s %sL%s %sL%s %sL%s %sZ", px(x), px(y-r), px(x+r), px(y), px(x), px(y+r), px(x-r), px(y))
}

func crossPath(x, y, r float64) string {
	return fmt.Sprintf("M%s %sL%s %sM%s %sL%s %s", px(x-r), px(y-r), px(x+r), px(y+r), px(x-r), px(y+r), px(x+r), px(y-r))
}

func trianglePath(x, y, r float64) string {
	return fmt.Sprintf("M%s %sL%s %sL%s %sZ", px(x-r), px(y-r), px(x+r), px(y-r), px(x), px(y+r))
}

func squarePath(x, y, r float64) string {
	return fmt.Sprintf("M%s %sh%sv%sh-%sZ", px(x-r), px(y-r), px(2*r), px(2*r), px(2*r))
}
