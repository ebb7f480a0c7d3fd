package reports

import (
	"strconv"
	"time"
)

// formatDuration renders d for people: "0s", "850ms", "14.2s", "3m05s",
// "1h02m". Precision drops as durations grow; reports show scales, and the
// exact values are in results.json.
func formatDuration(d time.Duration) string {
	negative := d < 0
	if negative {
		d = -d
	}
	var text string
	switch {
	case d == 0:
		text = "0s"
	case d < time.Millisecond:
		text = strconv.FormatInt(int64(d/time.Microsecond), 10) + "µs"
	case d < time.Second:
		text = strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d < time.Minute:
		text = strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		d = d.Round(time.Second)
		text = strconv.Itoa(int(d/time.Minute)) + "m" + twoDigits(int(d%time.Minute/time.Second)) + "s"
	default:
		d = d.Round(time.Minute)
		text = strconv.Itoa(int(d/time.Hour)) + "h" + twoDigits(int(d%time.Hour/time.Minute)) + "m"
	}
	if negative {
		return "-" + text
	}
	return text
}

// formatOffset renders an offset from a result's start: "+3m05s".
func formatOffset(d time.Duration) string {
	if d < 0 {
		return formatDuration(d)
	}
	return "+" + formatDuration(d)
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// formatBytes renders a size in binary units with one decimal: "37.5 MiB".
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	value := float64(n)
	suffixes := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for _, suffix := range suffixes {
		value /= unit
		if value < unit || suffix == suffixes[len(suffixes)-1] {
			return strconv.FormatFloat(value, 'f', 1, 64) + " " + suffix
		}
	}
	panic("reports: formatBytes ran out of units")
}
