package reports

import (
	"fmt"
	"strconv"
	"time"
)

// Geometry of the bar charts.
const (
	chartHeightPx   = 190.0
	chartTopPx      = 14.0
	chartBottomPx   = 30.0 // x labels
	chartLeftPx     = 64.0 // y labels
	chartRightPx    = 10.0
	chartMinWidthPx = 360.0
	rpoBarPx        = 24.0
	rpoGapPx        = 16.0
	bytesBarPx      = 6.0
	bytesGapPx      = 5.0
	yTicks          = 4
	// maxSyncBars bounds the bytes chart: a result with more syncs sums
	// consecutive ones into one pair of bars.
	maxSyncBars = 120
)

// chartView is a bar chart ready for the template.
type chartView struct {
	Width, Height    string
	PlotLeft, PlotX2 string
	BaseY            string
	Bars             []rectView
	YTicks           []axisTickView
	XLabels          []axisTickView
	Caption          string
}

type axisTickView struct {
	X, Y, Label string
}

// plotHeight is the height of a chart's plot area.
func plotHeight() float64 { return chartHeightPx - chartTopPx - chartBottomPx }

// newChart lays out a chart of n groups of the given width.
func newChart(groups int, groupPx float64) chartView {
	width := max(chartMinWidthPx, chartLeftPx+float64(groups)*groupPx+chartRightPx)
	return chartView{Width: px(width), Height: px(chartHeightPx), PlotLeft: px(chartLeftPx),
		PlotX2: px(width - chartRightPx), BaseY: px(chartHeightPx - chartBottomPx)}
}

// barY returns the top and height of a bar of value on an axis topped at
// ceiling; a zero value still shows as a sliver so that "nothing lost" is
// visibly a measurement, not a missing bar.
func barY(value, ceiling float64) (top, height float64) {
	base := chartHeightPx - chartBottomPx
	height = max(plotHeight()*value/ceiling, 1.5)
	return base - height, height
}

// yAxis labels a value axis topped at ceiling.
func yAxis(ceiling float64, label func(float64) string) []axisTickView {
	ticks := make([]axisTickView, 0, yTicks+1)
	for i := 0; i <= yTicks; i++ {
		value := ceiling * float64(i) / yTicks
		y := chartHeightPx - chartBottomPx - plotHeight()*float64(i)/yTicks
		ticks = append(ticks, axisTickView{X: px(chartLeftPx - 5), Y: px(y + 3), Label: label(value)})
	}
	return ticks
}

// buildRPOChart draws one bar per fail-over: its RPO, classed planned,
// unplanned or broken (a planned relocation that lost writes). The bar's
// number matches the row of the fail-over table.
func buildRPOChart(result Result) chartView {
	chart := newChart(len(result.Failovers), rpoBarPx+rpoGapPx)
	worst := worstRPO(result)
	ceiling := niceCeiling(worst.Seconds())
	if worst == 0 {
		ceiling = 1
	}
	chart.YTicks = yAxis(ceiling, func(v float64) string { return formatDuration(time.Duration(v * float64(time.Second))) })
	for i, f := range result.Failovers {
		x := chartLeftPx + rpoGapPx/2 + float64(i)*(rpoBarPx+rpoGapPx)
		top, height := barY(f.RPO.Seconds(), ceiling)
		class := "bar bar-unplanned"
		kind := "unplanned fail-over"
		if f.Planned {
			class, kind = "bar bar-planned", "planned relocation"
		}
		if f.Planned && f.LostWrites > 0 {
			class = "bar bar-broken"
		}
		tip := fmt.Sprintf("#%d %s of %s, %s -> %s at %s: RPO %s, %d writes lost (loss age %s), RTO %s", i+1, kind, f.Volume, f.From,
			f.To, formatOffset(offset(result, f.At)), formatDuration(f.RPO), f.LostWrites, formatDuration(f.LossAge), formatDuration(f.RTO))
		chart.Bars = append(chart.Bars, rectView{X: px(x), Y: px(top), W: px(rpoBarPx), H: px(height), Class: class, Tip: tip,
			Label: formatDuration(f.RPO), LabelX: px(x + rpoBarPx/2), LabelY: px(top - 3)})
		chart.XLabels = append(chart.XLabels, axisTickView{X: px(x + rpoBarPx/2), Y: px(chartHeightPx - chartBottomPx + 13),
			Label: strconv.Itoa(i + 1)})
	}
	chart.Caption = fmt.Sprintf("RPO per fail-over, worst %s", formatDuration(worst))
	return chart
}

// syncBar is one or more consecutive syncs drawn as one pair of bars.
type syncBar struct {
	first, last   int // indexes into the result's syncs
	shipped       uint64
	changed       uint64
	failback      bool
	firstAt       time.Time
	volume, route string
}

// groupSyncs sums consecutive syncs so that at most maxSyncBars pairs are
// drawn; a fail-back sync always stays alone, it is the one to look at.
func groupSyncs(syncs []Sync) []syncBar {
	per := (len(syncs) + maxSyncBars - 1) / maxSyncBars
	var bars []syncBar
	for i, s := range syncs {
		last := len(bars) - 1
		if last < 0 || s.Failback || bars[last].failback || bars[last].last-bars[last].first+1 >= per {
			bars = append(bars, syncBar{first: i, firstAt: s.At, volume: s.Volume, route: s.From + " -> " + s.To})
			last++
		}
		bar := &bars[last]
		bar.last = i
		bar.shipped += s.BytesShipped
		bar.changed += s.BytesChanged
		bar.failback = bar.failback || s.Failback
	}
	return bars
}

// buildBytesChart draws, per sync, the bytes shipped beside the bytes the
// workload changed: an incremental stream ships about what changed, a full
// copy where a delta was due towers over its neighbour.
func buildBytesChart(result Result) chartView {
	bars := groupSyncs(result.Syncs)
	group := 2*bytesBarPx + bytesGapPx
	chart := newChart(len(bars), group)
	var largest uint64
	for _, b := range bars {
		largest = max(largest, b.shipped, b.changed)
	}
	ceiling := niceBytesCeiling(largest)
	chart.YTicks = yAxis(ceiling, func(v float64) string { return formatBytes(uint64(v)) })
	labelEvery := max(1, len(bars)/12)
	for i, b := range bars {
		x := chartLeftPx + bytesGapPx/2 + float64(i)*group
		what := "sync"
		if b.last > b.first {
			what = fmt.Sprintf("syncs %d-%d", b.first+1, b.last+1)
		} else if b.failback {
			what = "fail-back sync"
		}
		tip := fmt.Sprintf("%s of %s, %s at %s: %s shipped for %s changed", what, b.volume, b.route,
			formatOffset(offset(result, b.firstAt)), formatBytes(b.shipped), formatBytes(b.changed))
		shippedClass := "bar bar-shipped"
		if b.failback {
			shippedClass = "bar bar-failback"
		}
		top, height := barY(float64(b.shipped), ceiling)
		chart.Bars = append(chart.Bars, rectView{X: px(x), Y: px(top), W: px(bytesBarPx), H: px(height), Class: shippedClass, Tip: tip})
		top, height = barY(float64(b.changed), ceiling)
		chart.Bars = append(chart.Bars, rectView{X: px(x + bytesBarPx), Y: px(top), W: px(bytesBarPx), H: px(height),
			Class: "bar bar-changed", Tip: tip})
		if i%labelEvery == 0 || b.failback {
			label := strconv.Itoa(b.first + 1)
			if b.failback {
				label = "fb"
			}
			chart.XLabels = append(chart.XLabels, axisTickView{X: px(x + bytesBarPx), Y: px(chartHeightPx - chartBottomPx + 13), Label: label})
		}
	}
	shipped, changed := syncTotals(result)
	chart.Caption = fmt.Sprintf("%d syncs: %s shipped for %s changed", len(result.Syncs), formatBytes(shipped), formatBytes(changed))
	if changed > 0 {
		chart.Caption += fmt.Sprintf(" (×%.2f)", float64(shipped)/float64(changed))
	}
	if len(bars) < len(result.Syncs) {
		chart.Caption += fmt.Sprintf("; each pair of bars sums up to %d consecutive syncs", (len(result.Syncs)+maxSyncBars-1)/maxSyncBars)
	}
	return chart
}
