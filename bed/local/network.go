package local

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os/exec"
	"strings"
)

// network is the bed's wiring: a bridge in the host's namespace that carries
// the API servers' address, and one network namespace per site whose eth0 is
// a veth pair's end on the bridge. Nothing leaves the bridge's /24: the
// namespaces have no default route.
type network struct {
	prefix string // "bb" and six hex digits: names the bridge, the veths and the namespaces
	subnet string // "10.213.N"
	sites  map[string]*siteNet
	made   []func() error // undo steps, in the order made
}

// siteNet is one site's namespace and address.
type siteNet struct {
	namespace string
	hostVeth  string
	ip        string
}

// hostIP is the bridge's address: where the API servers listen.
func (n *network) hostIP() string { return n.subnet + ".1" }

func (n *network) bridge() string { return n.prefix }

// newNetwork builds the bridge and one namespace per site. On error whatever
// was made is taken down again.
func newNetwork(sites []string) (n *network, err error) {
	id := make([]byte, 3)
	if _, err := rand.Read(id); err != nil {
		return nil, err
	}
	n = &network{prefix: "bb" + hex.EncodeToString(id), sites: map[string]*siteNet{}}
	if n.subnet, err = freeSubnet(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.close())
		}
	}()
	if err := n.ip("link", "add", n.bridge(), "type", "bridge"); err != nil {
		return nil, err
	}
	n.made = append(n.made, func() error { return n.ip("link", "del", n.bridge()) })
	if err := n.ip("addr", "add", n.hostIP()+"/24", "dev", n.bridge()); err != nil {
		return nil, err
	}
	if err := n.ip("link", "set", n.bridge(), "up"); err != nil {
		return nil, err
	}
	for i, site := range sites {
		s := &siteNet{namespace: n.prefix + "-" + site, hostVeth: fmt.Sprintf("%s%c", n.prefix, 'a'+i),
			ip: fmt.Sprintf("%s.%d", n.subnet, 2+i)}
		if err := n.ip("netns", "add", s.namespace); err != nil {
			return nil, err
		}
		n.made = append(n.made, func() error { return n.ip("netns", "del", s.namespace) })
		n.sites[site] = s
		for _, args := range [][]string{
			{"link", "add", s.hostVeth, "type", "veth", "peer", "name", "eth0", "netns", s.namespace},
			{"link", "set", s.hostVeth, "master", n.bridge(), "up"},
			{"-n", s.namespace, "addr", "add", s.ip + "/24", "dev", "eth0"},
			{"-n", s.namespace, "link", "set", "eth0", "up"},
			{"-n", s.namespace, "link", "set", "lo", "up"},
		} {
			if err := n.ip(args...); err != nil {
				return nil, err
			}
		}
	}
	return n, nil
}

// freeSubnet picks a 10.213.N.0/24 no interface of the host is on.
func freeSubnet() (string, error) {
	addresses, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for range 64 {
		third, err := rand.Int(rand.Reader, big.NewInt(224))
		if err != nil {
			return "", err
		}
		subnet := fmt.Sprintf("10.213.%d", 16+third.Int64())
		taken := false
		for _, a := range addresses {
			if strings.HasPrefix(a.String(), subnet+".") {
				taken = true
			}
		}
		if !taken {
			return subnet, nil
		}
	}
	return "", errors.New("no free 10.213.N.0/24 for the bed's bridge")
}

// ip runs one iproute2 command.
func (n *network) ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// partition cuts the traffic from site a to site b: a blackhole route in a's
// namespace drops every packet a sends to b's address (a TCP connection
// needs both directions, so a one-way cut stops b's calls to a too).
func (n *network) partition(a, b string) error {
	from, to := n.sites[a], n.sites[b]
	if from == nil || to == nil {
		return fmt.Errorf("no site network for %s or %s", a, b)
	}
	if n.cut(a, b) {
		return nil
	}
	return n.ip("-n", from.namespace, "route", "add", "blackhole", to.ip+"/32")
}

// heal lifts a cut made by partition.
func (n *network) heal(a, b string) error {
	from, to := n.sites[a], n.sites[b]
	if from == nil || to == nil || !n.cut(a, b) {
		return nil
	}
	return n.ip("-n", from.namespace, "route", "del", "blackhole", to.ip+"/32")
}

// cut reads a's routing table: is b's address blackholed?
func (n *network) cut(a, b string) bool {
	out, err := exec.Command("ip", "-n", n.sites[a].namespace, "route", "show", "type", "blackhole").Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 && fields[1] == n.sites[b].ip {
			return true
		}
	}
	return false
}

// namespacePath is what nsenter --net takes.
func (s *siteNet) namespacePath() string { return "/run/netns/" + s.namespace }

// close deletes the namespaces (their veths go with them) and the bridge.
func (n *network) close() error {
	var errs []error
	for i := len(n.made) - 1; i >= 0; i-- {
		errs = append(errs, n.made[i]())
	}
	n.made = nil
	return errors.Join(errs...)
}

// namespacesWithPrefix lists the network namespaces whose name starts with
// prefix: what Close must leave none of.
func namespacesWithPrefix(prefix string) ([]string, error) {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return nil, err
	}
	var found []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, _, _ := strings.Cut(strings.TrimSpace(line), " "); strings.HasPrefix(name, prefix) {
			found = append(found, name)
		}
	}
	return found, nil
}

// NamespacesWithPrefix lists the network namespaces whose names start with
// prefix (a bed's NetworkPrefix): after Close, none.
func NamespacesWithPrefix(prefix string) ([]string, error) { return namespacesWithPrefix(prefix) }
