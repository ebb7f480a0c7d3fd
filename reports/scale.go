package reports

import (
	"math"
	"strconv"
	"time"
)

// px formats an SVG coordinate with one decimal: enough for a screen, short
// in the file, and the same bytes on every machine.
func px(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		panic("reports: a coordinate is not finite")
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// timeScale maps instants of one result onto the x axis of a drawing.
type timeScale struct {
	start, end   time.Time
	leftPx, wide float64 // first pixel and width of the plot area
}

func newTimeScale(start, end time.Time, leftPx, widthPx float64) timeScale {
	if !end.After(start) {
		end = start.Add(time.Second)
	}
	if widthPx <= 0 {
		panic("reports: a time scale needs a width")
	}
	return timeScale{start: start, end: end, leftPx: leftPx, wide: widthPx}
}

// x is the pixel of t, clamped to the plot area.
func (s timeScale) x(t time.Time) float64 {
	fraction := float64(t.Sub(s.start)) / float64(s.end.Sub(s.start))
	return s.leftPx + s.wide*min(max(fraction, 0), 1)
}

// tickSteps are the spacings a time axis may use.
var tickSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond,
	20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
	15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour,
	6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// maxTicks bounds the labels of a time axis.
const maxTicks = 12

// timeTicks returns the offsets of an axis from 0 to span at the smallest
// step that needs no more than maxTicks labels.
func timeTicks(span time.Duration) []time.Duration {
	step := tickSteps[len(tickSteps)-1]
	for _, candidate := range tickSteps {
		if span/candidate < maxTicks {
			step = candidate
			break
		}
	}
	var ticks []time.Duration
	for t := time.Duration(0); t <= span && len(ticks) <= maxTicks+1; t += step {
		ticks = append(ticks, t)
	}
	return ticks
}

// niceCeiling rounds v up to 1, 2 or 5 times a power of ten, the top of a
// value axis.
func niceCeiling(v float64) float64 {
	if v <= 0 {
		return 1
	}
	magnitude := math.Pow(10, math.Floor(math.Log10(v)))
	for _, factor := range []float64{1, 2, 5, 10} {
		if factor*magnitude >= v {
			return factor * magnitude
		}
	}
	panic("reports: niceCeiling found no ceiling")
}

// niceBytesCeiling rounds n up to 1, 2 or 5 times a power of 1024 times a
// power of ten (1 MiB, 2 MiB, 5 MiB, 10 MiB, ... 1 GiB), so that the axis
// labels read as whole binary units.
func niceBytesCeiling(n uint64) float64 {
	unit := 1.0
	value := float64(n)
	for value >= 1024 && unit < 1<<60 {
		value /= 1024
		unit *= 1024
	}
	return niceCeiling(value) * unit
}
