package placement

import (
	"fmt"
	"testing"
)

// benchConfig is wide enough for 50,000 resources: every port a DRBD resource
// could use, and every minor.
func benchConfig() Config {
	return Config{Default: Ranges{FirstPort: 1024, LastPort: 65535, FirstMinor: 1, LastMinor: MaxMinor}}
}

// benchRecords are n resources of three replicas each over 30 nodes, packed
// from the bottom of the ranges, so that the next free value lies above all
// of them: the worst case for a lowest-free search.
func benchRecords(n int) []Allocation {
	records := make([]Allocation, 0, n)
	for i := range n {
		records = append(records, alloc(fmt.Sprintf("r%06d", i), uint16(1024+i), uint32(1+i),
			fmt.Sprintf("node-%02d", i%30), fmt.Sprintf("node-%02d", (i+1)%30), fmt.Sprintf("node-%02d", (i+2)%30)))
	}
	return records
}

// BenchmarkAllocateNth allocates port, minor and node-ids for the n-th
// resource of a cluster (and releases it again, so every iteration is the
// n-th). Flat across n: the cost does not grow with the cluster.
func BenchmarkAllocateNth(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 50_000} {
		b.Run(fmt.Sprintf("resources=%d", n), func(b *testing.B) {
			a, err := NewAllocator(benchConfig(), benchRecords(n-1))
			if err != nil {
				b.Fatal(err)
			}
			nodes := []string{"node-03", "node-17", "node-29"}
			for b.Loop() {
				got, err := a.Allocate("nth", nodes)
				if err != nil || int(got.Port) != 1024+n-1 {
					b.Fatalf("Allocate() = %+v, %v; want port %d", got, err, 1024+n-1)
				}
				a.Release("nth")
			}
		})
	}
}

// BenchmarkReferenceAllocateNth is the naive reference on the same task, for
// contrast: it scans every allocation for every candidate value.
func BenchmarkReferenceAllocateNth(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("resources=%d", n), func(b *testing.B) {
			reference := &naiveAllocator{config: benchConfig(), records: map[string]Allocation{}}
			for _, r := range benchRecords(n - 1) {
				reference.records[r.Resource] = r
			}
			nodes := []string{"node-03", "node-17", "node-29"}
			for b.Loop() {
				if _, err := reference.allocate("nth", nodes); err != nil {
					b.Fatal(err)
				}
				delete(reference.records, "nth")
			}
		})
	}
}

// BenchmarkNewAllocator reads 10,000 records back, as an operator does when it
// starts: the records are checked, never trusted.
func BenchmarkNewAllocator(b *testing.B) {
	records := benchRecords(10_000)
	for b.Loop() {
		if _, err := NewAllocator(benchConfig(), records); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPlace(b *testing.B) {
	candidates := make([]Candidate, 0, 100)
	for i := range 100 {
		candidates = append(candidates, thin(fmt.Sprintf("node-%03d", i), uint64(i%17)*gib))
	}
	for b.Loop() {
		if _, err := Place(request(3, gib), candidates); err != nil {
			b.Fatal(err)
		}
	}
}
