package infra

import (
	"net/netip"
	"strings"
	"testing"
)

func TestTheBedsRangesOverlapNeitherEachOtherNorDocker0(t *testing.T) {
	docker0 := []HostRoute{{Dst: netip.MustParsePrefix("172.17.0.0/16"), Device: "docker0"},
		{Dst: netip.MustParsePrefix("192.0.2.0/24"), Device: "eth0"}}
	if clashes := Clashes(Ranges(), docker0); len(clashes) != 0 {
		t.Errorf("clashes on a host with docker0: %v", clashes)
	}
	seen := map[netip.Prefix]string{}
	for _, c := range Clusters() {
		for _, p := range []netip.Prefix{c.PodSubnet, c.ServiceSubnet} {
			if other, ok := seen[p]; ok {
				t.Errorf("%s and %s share %s", c.Name, other, p)
			}
			seen[p] = c.Name
		}
		if !c.PodSubnet.Contains(c.NodePodCIDR().Addr()) || c.NodePodCIDR().Bits() != 24 {
			t.Errorf("%s: node pod CIDR %s is not the first /24 of %s", c.Name, c.NodePodCIDR(), c.PodSubnet)
		}
	}
}

func TestAClashNamesTheRangeAndTheRoute(t *testing.T) {
	routes := []HostRoute{
		{Dst: netip.MustParsePrefix("10.241.7.0/24"), Device: "vpn0"},
		// The bed's own bridges from an earlier bring-up are no clash.
		{Dst: KindSubnet, Device: KindBridge},
		{Dst: netip.MustParsePrefix("0.0.0.0/0"), Device: "eth0"},
	}
	clashes := Clashes(Ranges(), routes)
	if len(clashes) != 1 || !strings.Contains(clashes[0], "baton-site-a's pods (10.241.0.0/16) clashes with the host's route to 10.241.7.0/24 on vpn0") {
		t.Errorf("clashes %q", clashes)
	}
	overlapping := []Range{{"a", netip.MustParsePrefix("10.0.0.0/8")}, {"b", netip.MustParsePrefix("10.1.0.0/16")}}
	if clashes := Clashes(overlapping, nil); len(clashes) != 1 || !strings.Contains(clashes[0], "a (10.0.0.0/8) overlaps b") {
		t.Errorf("clashes %q", clashes)
	}
}

func TestThisHostsRoutesAreRead(t *testing.T) {
	routes, err := hostRoutes()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if !r.Dst.IsValid() {
			t.Errorf("route %+v has no destination", r)
		}
	}
}
