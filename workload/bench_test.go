package workload

import (
	"testing"
	"time"
)

// BenchmarkStep: the cost of one application step on in-memory devices,
// including building, checksumming and recording its blocks.
func BenchmarkStep(b *testing.B) {
	for _, m := range models {
		b.Run(m.name, func(b *testing.B) {
			// A repository as large as the benchmark needs: the device is sparse.
			w := m.make(50, WithRepository(RepositoryLayout{ObjectBlocks: 1 << 26, Refs: DefaultRepositoryLayout().Refs}))
			s := newSite(w)
			now, writes := epoch, 0
			for b.Loop() {
				result, err := w.Step(now, s.devices())
				if err != nil {
					b.Fatal(err)
				}
				writes += result.Writes
				now = now.Add(time.Millisecond)
			}
			b.ReportMetric(float64(writes)/float64(b.N), "blocks/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(writes), "ns/block")
		})
	}
}

// BenchmarkVerify10kBlocks: one Verify of a history of 10,000 block writes
// (default layouts: the database's log ring and pages are overwritten, the
// uploads ring wraps, the repository's objects are all distinct).
func BenchmarkVerify10kBlocks(b *testing.B) {
	const historyWrites = 10_000
	for _, m := range models {
		b.Run(m.name, func(b *testing.B) {
			w := m.make(51)
			s := newSite(w)
			now, writes := epoch, 0
			for writes < historyWrites {
				result, err := w.Step(now, s.devices())
				if err != nil {
					b.Fatal(err)
				}
				writes += result.Writes
				now = now.Add(time.Millisecond)
			}
			blocks := 0
			for _, name := range s.names() {
				blocks += len(s[name].Blocks())
			}
			for b.Loop() {
				if v := w.Verify(s.devices(), now); !v.Consistent() {
					b.Fatal(v)
				}
			}
			b.ReportMetric(float64(writes), "writes")
			b.ReportMetric(float64(blocks), "blocks")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(writes), "ns/write")
		})
	}
}
