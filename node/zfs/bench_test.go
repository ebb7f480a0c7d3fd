package zfs

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseVolumes parses the listing of a pool of 1000 volumes, what
// an agent reads at every status report.
func BenchmarkParseVolumes(b *testing.B) {
	var out strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&out, "tank/pvc-%04d\t1073741824\t0\t52428800\ttank/pvc-0001@baton-000001\toff\n", i)
	}
	data := []byte(out.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseVolumes(data); err != nil {
			b.Fatal(err)
		}
	}
}
