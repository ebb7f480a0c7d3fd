package infra

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
)

// Range is one address range the bed uses, named for the error that
// reports a clash.
type Range struct {
	What   string
	Prefix netip.Prefix
}

// Ranges are every range the bed puts on the host or inside its nodes.
func Ranges() []Range {
	out := []Range{{"kind's network (the nodes)", KindSubnet}, {"the private dockerd's bridge", DockerdSubnet}}
	for _, c := range Clusters() {
		out = append(out, Range{c.Name + "'s pods", c.PodSubnet}, Range{c.Name + "'s services", c.ServiceSubnet})
	}
	return out
}

// HostRoute is a route of the host's main table: its destination and the
// interface it leaves by.
type HostRoute struct {
	Dst    netip.Prefix
	Device string
}

// Clashes lists, one line each, the bed's ranges that overlap each other
// or a route of the host, ignoring the routes through the bed's own
// bridges (its earlier bring-up). A host dockerd's docker0
// (172.17.0.0/16) is such a route: the bed's ranges keep clear of it, and
// a host that routes 10.240.0.0/16 somewhere is told so here instead of
// finding its traffic taken.
func Clashes(ranges []Range, routes []HostRoute) []string {
	var out []string
	for i, a := range ranges {
		for _, b := range ranges[i+1:] {
			if a.Prefix.Overlaps(b.Prefix) {
				out = append(out, fmt.Sprintf("%s (%s) overlaps %s (%s)", a.What, a.Prefix, b.What, b.Prefix))
			}
		}
		for _, r := range routes {
			if r.Device == KindBridge || r.Device == DockerdBridge || !r.Dst.IsValid() || r.Dst.Bits() == 0 {
				continue
			}
			if a.Prefix.Overlaps(r.Dst) {
				out = append(out, fmt.Sprintf("%s (%s) clashes with the host's route to %s on %s", a.What, a.Prefix, r.Dst, r.Device))
			}
		}
	}
	return out
}

// hostRoutes reads the host's IPv4 routes of every table, by netlink.
func hostRoutes() ([]HostRoute, error) {
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: 0}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("listing the host's routes: %w", err)
	}
	names := map[int]string{}
	links, err := netlink.LinkList()
	if err != nil {
		return nil, fmt.Errorf("listing the host's links: %w", err)
	}
	for _, l := range links {
		names[l.Attrs().Index] = l.Attrs().Name
	}
	var out []HostRoute
	for _, r := range routes {
		if r.Dst == nil {
			continue // a default route overlaps everything by design
		}
		p, ok := netip.AddrFromSlice(r.Dst.IP)
		if !ok {
			continue
		}
		bits, _ := r.Dst.Mask.Size()
		out = append(out, HostRoute{Dst: netip.PrefixFrom(p.Unmap(), bits), Device: names[r.LinkIndex]})
	}
	slices.SortFunc(out, func(a, b HostRoute) int { return strings.Compare(a.Dst.String(), b.Dst.String()) })
	return out, nil
}

// CheckAddressing refuses to bring the bed up on a host where its ranges
// clash, naming each clash.
func CheckAddressing() error {
	routes, err := hostRoutes()
	if err != nil {
		return err
	}
	if clashes := Clashes(Ranges(), routes); len(clashes) > 0 {
		return fmt.Errorf("the bed's address ranges clash on this host (change them in bed/real/layout.go): %s",
			strings.Join(clashes, "; "))
	}
	return nil
}
