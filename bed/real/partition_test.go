package real

import "testing"

// TestParseCountersSumsEachObjectsRules reads a listing as nft prints the
// chaos table back: one object's egress and ingress rules summed, a loss
// rule's too, the chain headers skipped.
func TestParseCountersSumsEachObjectsRules(t *testing.T) {
	listing := `table inet baton-chaos {
	chain egress {
		type filter hook postrouting priority 300; policy accept;
		ip daddr 10.250.0.3 counter packets 12 bytes 720 drop comment "partition-baton-site-a-baton-site-b"
		ip daddr 10.250.0.4 counter packets 3 bytes 180 numgen random mod 100 < 30 drop comment "loss-baton-site-a-baton-hub"
	}
	chain ingress {
		type filter hook prerouting priority -300; policy accept;
		ip saddr 10.250.0.3 counter packets 30 bytes 2400 drop comment "partition-baton-site-a-baton-site-b"
	}
}
`
	got := parseCounters(listing)
	want := map[string]uint64{"partition-baton-site-a-baton-site-b": 42, "loss-baton-site-a-baton-hub": 3}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d packets, want %d", name, got[name], n)
		}
	}
}
