package reports_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/reports/reportstest"
)

// benchmarkLarge renders a sweep of 1,000 results, as `make sim SEEDS=1000`
// would hand over, and reports the output's size.
func benchmarkLarge(b *testing.B, write func(io.Writer, reports.Run) error) {
	run := reportstest.LargeRun(1000)
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if err := write(&out, run); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(out.Len())/(1<<20), "MiB/op-output")
}

func BenchmarkWriteJUnit1000(b *testing.B) { benchmarkLarge(b, reports.WriteJUnit) }
func BenchmarkWriteJSON1000(b *testing.B)  { benchmarkLarge(b, reports.WriteJSON) }
func BenchmarkWriteHTML1000(b *testing.B)  { benchmarkLarge(b, reports.WriteHTML) }
