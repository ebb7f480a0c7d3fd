package drbd

import (
	"fmt"
	"testing"
)

// BenchmarkProtocolCWrite measures 4 KiB protocol C writes through the
// simulated device: the local volume and every Connected peer's get each
// write before WriteAt returns. Writes/s = 1e9 / (ns/op).
func BenchmarkProtocolCWrite(b *testing.B) {
	for _, replicas := range []int{2, 3} {
		b.Run(fmt.Sprintf("replicas=%d", replicas), func(b *testing.B) {
			site := newSimSite(b, replicas, nil)
			res := newSimResource(b, site, "r0", replicas)
			res.start()
			res.must(res.r[0].Primary("r0", false))
			dev, err := res.r[0].Open("r0")
			res.must(err)
			data := fill(0x5a, 4096)
			blocks := int64(testVolumeBytes/4096 - 1)
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := dev.WriteAt(data, (int64(i)%blocks)*4096); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			res.must(dev.Close())
		})
	}
}
