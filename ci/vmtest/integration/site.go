package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/replicatortest"
)

// awaitTimeout bounds Site.Await: DRBD on TCG guests connects in seconds, and
// notices a lost peer within its ping and request timeouts (10 s and 6 s).
const awaitTimeout = 3 * time.Minute

// Site is replicatortest.Site over the guests: real DRBD, real time, and
// partitions made with nftables on both sides of the data network.
type Site struct {
	t      *testing.T
	guests *Guests
	cuts   map[[2]string]bool // node, peer: the node drops the peer's packets
}

var _ replicatortest.Site = (*Site)(nil)

// NewSite is a site for one test. The guests outlive it, so what the test
// leaves is undone at its end: volumes it created are destroyed and
// partitions it did not heal are healed (a simulated site is simply dropped).
func NewSite(t *testing.T, guests *Guests) *Site {
	s := &Site{t: t, guests: guests, cuts: map[[2]string]bool{}}
	t.Cleanup(func() {
		for cut := range s.cuts {
			s.mend(cut[0], cut[1])
		}
	})
	return s
}

func (s *Site) Nodes() []string {
	var names []string
	for _, n := range s.guests.Nodes {
		names = append(names, n.Name)
	}
	return names
}

func (s *Site) Replicator(node string) backend.Replicator { return s.guests.Node(node).DRBD }

// CreateVolume creates a thin zvol: zeros, like every node's fresh replica.
// Its cleanup runs after the suite's Down (cleanups run last-in first).
func (s *Site) CreateVolume(node, volume string, sizeBytes uint64) error {
	pool := s.guests.Node(node).Pool
	if err := pool.CreateVolume(volume, sizeBytes, backend.Thin); err != nil {
		return err
	}
	s.t.Cleanup(func() {
		if err := pool.DestroyVolume(volume); err != nil {
			s.t.Logf("destroying %s on %s: %v", volume, node, err)
		}
	})
	return nil
}

func (s *Site) Address(node string, port uint16) string { return s.guests.Node(node).Address(port) }

// Partition drops every packet between two nodes' data addresses, on both
// nodes, so that neither side sees the other go: DRBD finds out by timeout,
// as in a real partition.
func (s *Site) Partition(a, b string) {
	s.cut(a, b)
	s.cut(b, a)
}

func (s *Site) Heal(a, b string) {
	s.mend(a, b)
	s.mend(b, a)
}

func cutTable(peerIP string) string { return "baton_cut_" + strings.ReplaceAll(peerIP, ".", "_") }

// cutRules is the nftables table that drops every packet from and to ip.
func cutRules(ip string) string {
	return fmt.Sprintf(`table inet %s {
	chain input { type filter hook input priority 0; policy accept; ip saddr %s drop; }
	chain output { type filter hook output priority 0; policy accept; ip daddr %s drop; }
}
`, cutTable(ip), ip, ip)
}

func (s *Site) cut(node, peer string) { s.cutThen(node, peer) }

// cutThen cuts node off peer and, in the same shell on node, runs then (if
// given) the moment the rules are in: nothing node's kernel notices about the
// cut can come between the two.
func (s *Site) cutThen(node, peer string, then ...string) {
	n, ip := s.guests.Node(node), s.guests.Node(peer).DataIP
	name, args := "nft", []string{"-f", "-"}
	if len(then) > 0 {
		name, args = "sh", []string{"-c", `nft -f - && exec "$@"`, "sh"}
		args = append(args, then...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.Output(n.Cmder.Command(ctx, name, args...).SetStdin(strings.NewReader(cutRules(ip))))
	s.cuts[[2]string{node, peer}] = true // the rules may be in even if then failed: the cleanup mends
	if err != nil {
		s.t.Fatalf("cutting %s off %s then running %q: %v", peer, node, then, err)
	}
	if len(out) > 0 {
		s.t.Logf("%s: %q printed %q", node, then, out)
	}
}

func (s *Site) mend(node, peer string) {
	if !s.cuts[[2]string{node, peer}] {
		return
	}
	n, ip := s.guests.Node(node), s.guests.Node(peer).DataIP
	if _, err := n.Output("nft", "delete", "table", "inet", cutTable(ip)); err != nil {
		s.t.Errorf("mending %s to %s: %v", node, peer, err)
		return
	}
	delete(s.cuts, [2]string{node, peer})
}

// Await polls cond until it holds or awaitTimeout passes.
func (s *Site) Await(cond func() bool) bool {
	deadline := time.Now().Add(awaitTimeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Pass lets real time pass.
func (s *Site) Pass(d time.Duration) { time.Sleep(d) }
