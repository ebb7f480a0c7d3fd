package reports

import (
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                 "0s",
		1500 * time.Nanosecond:            "1µs",
		850 * time.Millisecond:            "850ms",
		14200 * time.Millisecond:          "14.2s",
		3*time.Minute + 5*time.Second:     "3m05s",
		time.Hour + 2*time.Minute:         "1h02m",
		-2 * time.Second:                  "-2.0s",
		59*time.Minute + 59*time.Second:   "59m59s",
		26*time.Hour + 30*time.Second + 1: "26h01m",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
	if got := formatOffset(90 * time.Second); got != "+1m30s" {
		t.Errorf("formatOffset = %q", got)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 37<<20 + 512<<10: "37.5 MiB", 8 << 30: "8.0 GiB",
		1<<64 - 1: "16.0 EiB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
