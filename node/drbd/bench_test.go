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
