package integration

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/drbd"
	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/backend/pooltest"
)

// utsCmder runs every command in a UTS namespace of its own whose hostname
// is the node's, as a kind node's container does: drbdadm finds its "on"
// section by `uname -n`, and the two nodes of the shared-kernel test run in
// one guest whose hostname is neither's.
type utsCmder struct{ node string }

func (u utsCmder) Command(ctx context.Context, name string, args ...string) exec.Cmd {
	wrapped := append([]string{"--uts", "sh", "-c", `hostname "$0" && exec "$@"`, u.node, name}, args...)
	return exec.Local{}.Command(ctx, "unshare", wrapped...)
}

// kindNode is one of two storage nodes on this guest's kernel, as kind's
// nodes share their host's: a pool dataset of its own (kind's nodes have a
// pool each), an address of its own on the guest's loopback device (drbdadm
// wants a node's address on an interface: 127.0.0.2 is routed to lo but not
// on it), and node/drbd told to keep its resources and minors apart.
type kindNode struct {
	name string
	ip   string
	pool *zfs.Pool
	drbd *drbd.Replicator
}

func newKindNode(t *testing.T, local *Node, name, ip string, offset uint32) *kindNode {
	t.Helper()
	dataset := poolName + "/" + name
	if _, err := local.Output("zfs", "create", "-p", dataset); err != nil {
		t.Fatalf("zfs create %s: %v", dataset, err)
	}
	t.Cleanup(func() { _, _ = local.Output("zfs", "destroy", "-r", dataset) })
	if _, err := local.Output("ip", "address", "add", ip+"/32", "dev", "lo"); err != nil {
		t.Fatalf("ip address add %s/32 dev lo: %v", ip, err)
	}
	t.Cleanup(func() { _, _ = local.Output("ip", "address", "del", ip+"/32", "dev", "lo") })
	cmder := utsCmder{node: name}
	pool, err := zfs.New(zfs.Options{Cmder: cmder, Dataset: dataset})
	must(t, err, "zfs.New on %s", dataset)
	replicator, err := drbd.New(drbd.Options{Cmder: cmder, Node: name, Backing: pool.DevicePath,
		ConfigDir: "/var/lib/baton/drbd-" + name, SharedKernel: drbd.SharedKernel{Suffix: name, MinorOffset: offset}})
	must(t, err, "drbd.New for %s", name)
	return &kindNode{name: name, ip: ip, pool: pool, drbd: replicator}
}

// TestTwoReplicasInOneKernel is kind's zfs-drbd mode in one guest: the core
// gives a volume's resource one name, one minor and one port on both of a
// site's nodes, and two node agents on one kernel bring it up -- each under
// its own suffix and minor offset -- connected, UpToDate, replicating, and
// down again.
func TestTwoReplicasInOneKernel(t *testing.T) {
	g := needGuests(t)
	local := g.Nodes[0]
	const name, minor, port, sizeBytes = "it-shared", 2600, 7600, 32 * mib
	a := newKindNode(t, local, "kind-a", "10.97.0.1", 0)
	b := newKindNode(t, local, "kind-b", "10.97.0.2", 100000)
	nodes := []*kindNode{a, b}
	config := backend.ResourceConfig{Name: name, Minor: minor, Port: port}
	for i, n := range nodes {
		config.Nodes = append(config.Nodes, backend.ResourceNode{Node: n.name, NodeID: uint8(i),
			Address: n.ip + ":7600", Volume: name})
	}
	for _, n := range nodes {
		upReplica(t, n.name, n.pool, n.drbd, config, sizeBytes)
	}

	// The kernel runs two resources, each with its node's name and minor;
	// each node sees its own under the core's name and minor.
	for _, want := range []string{"it-shared-kind-a", "it-shared-kind-b"} {
		if out, err := local.Output("drbdsetup", "show", want); err != nil || !strings.Contains(string(out), "resource "+want) {
			t.Errorf("drbdsetup show %s: %v\n%s", want, err, out)
		}
	}
	for _, dev := range []string{"/dev/drbd2600", "/dev/drbd102600"} {
		if _, err := local.Output("test", "-b", dev); err != nil {
			t.Errorf("%s is no block device: %v", dev, err)
		}
	}
	for _, n := range nodes {
		shown, err := n.drbd.Show(name)
		must(t, err, "Show on %s", n.name)
		if shown.Name != name || shown.Minor != minor || shown.Port != port || len(shown.Nodes) != 2 {
			t.Errorf("%s shows %+v, want %s, minor %d, port %d, two nodes", n.name, shown, name, minor, port)
		}
	}

	await(t, "the two replicas to connect", func() bool {
		s, err := a.drbd.Status(name)
		return err == nil && len(s.Peers) == 1 && s.Peers[0].Node == b.name && s.Peers[0].Connection == backend.Connected
	})
	must(t, a.drbd.NewCurrentUUID(name, true), "new-current-uuid --clear-bitmap on %s", a.name)
	await(t, "both UpToDate", func() bool { return upToDatePair(a.drbd, name) && upToDatePair(b.drbd, name) })
	for _, n := range nodes {
		s, _ := n.drbd.Status(name)
		t.Logf("%s: %+v", n.name, s)
	}

	// What a writes through its device is on b's: the replication is real.
	must(t, a.drbd.Primary(name, false), "Primary on %s", a.name)
	data := pooltest.Pattern(11, 4*mib)
	dev, err := a.drbd.Open(name)
	must(t, err, "Open on %s", a.name)
	writeDevice(t, dev, mib, data)
	must(t, dev.Close(), "Close")
	must(t, a.drbd.Secondary(name), "Secondary on %s", a.name)
	must(t, b.drbd.Primary(name, false), "Primary on %s", b.name)
	peer, err := b.drbd.Open(name)
	must(t, err, "Open on %s", b.name)
	got := make([]byte, len(data))
	if n, err := peer.ReadAt(got, mib); n != len(got) || err != nil {
		t.Fatalf("ReadAt on %s: %d, %v", b.name, n, err)
	}
	must(t, peer.Close(), "Close")
	if !bytes.Equal(got, data) {
		t.Fatalf("%s reads other bytes than %s wrote", b.name, a.name)
	}
	must(t, b.drbd.Secondary(name), "Secondary on %s", b.name)

	for _, n := range nodes {
		must(t, n.drbd.Down(name), "Down on %s", n.name)
		if _, err := n.drbd.Show(name); !errors.Is(err, backend.ErrNotFound) {
			t.Errorf("Show on %s after Down: %v, want ErrNotFound", n.name, err)
		}
	}
	if out, _ := local.Output("drbdsetup", "show"); strings.Contains(string(out), name) {
		t.Errorf("the kernel still runs %s after both Downs:\n%s", name, out)
	}
}
