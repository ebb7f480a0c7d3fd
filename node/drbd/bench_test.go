package drbd

import "testing"

// BenchmarkStatus parses and maps one resource's status, what an agent does
// for every resource at every report.
func BenchmarkStatus(b *testing.B) {
	data := []byte(statusCutOff)
	for b.Loop() {
		live, err := parseStatus(data)
		if err != nil {
			b.Fatal(err)
		}
		_ = resourceStatus(live, pairPeers, V84)
	}
}

// BenchmarkParseShow84 parses `drbdsetup show`, read at every Up and Open.
func BenchmarkParseShow84(b *testing.B) {
	for b.Loop() {
		if _, err := parseShow84(showPair); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatus9 parses and maps DRBD 9's events2 of a resource with two
// peers, what an agent on DRBD 9 does for every resource at every report.
func BenchmarkStatus9(b *testing.B) {
	data := []byte(sample(b, "events2", "diskless-peer.txt"))
	for b.Loop() {
		live, err := parseEvents2(data)
		if err != nil {
			b.Fatal(err)
		}
		_ = resourceStatus(live, threeOfA, V9)
	}
}

// BenchmarkParseShow9 parses DRBD 9's `drbdsetup show`, read at every Up and Open.
func BenchmarkParseShow9(b *testing.B) {
	text := sample(b, "show9", "three-nodes.txt")
	for b.Loop() {
		if _, err := parseShow9(text); err != nil {
			b.Fatal(err)
		}
	}
}
