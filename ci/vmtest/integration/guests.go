// Package integration runs baton's node backends on real ZFS and DRBD in the
// vmtest guests: the Replicator conformance suite on a DRBD pair that spans
// two guests, and the integration stories of issue 7 (a zvol replicated by
// DRBD, an incremental stream proportional to the change, an agent restart
// that adopts a running resource). The test binary runs in one guest and
// drives the other through guestrpc; outside `make vmtest` every test skips.
package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/baton-dr/baton/ci/vmtest/guestrpc"
	"github.com/baton-dr/baton/node/drbd"
	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/localdevice"
	"github.com/baton-dr/baton/node/zfs"
)

// The guests' pool: a sparse file on each guest's disk, adopted if a test
// before made it.
const (
	poolName      = "tank"
	poolFile      = "/var/tmp/tank.img"
	poolFileBytes = 4 << 30
)

// Node is one guest: its name, its address on the data network, and its
// backends, driven locally or through the guest's guestd.
type Node struct {
	Name   string
	DataIP string
	Cmder  exec.Cmder
	// Devices reaches the node's block devices: this machine's for this
	// node, the guest's through guestd for the far one (a local fence would
	// act on this node's device of the same path).
	Devices localdevice.Devices
	Pool    *zfs.Pool
	DRBD    *drbd.Replicator
}

// Guests are the nodes of a run, this guest first.
type Guests struct {
	Nodes []*Node
}

// Environment variables `make vmtest` sets in the guest that runs the tests.
const (
	envNodes = "BATON_VMTEST_NODES" // "nodea=10.99.0.1,nodeb=10.99.0.2"
	envPeer  = "BATON_VMTEST_PEER"  // the other guest's guestd, "10.98.0.2:7070"
)

// ErrNotInGuest says the tests run outside the vmtest guests.
var ErrNotInGuest = fmt.Errorf("%s and %s are not set: real ZFS and DRBD run in `make vmtest`", envNodes, envPeer)

// Connect builds the guests from the environment: this guest by its
// hostname, the other through its guestd.
func Connect() (*Guests, error) {
	nodes, peer := os.Getenv(envNodes), os.Getenv(envPeer)
	if nodes == "" || peer == "" {
		return nil, ErrNotInGuest
	}
	self, err := os.Hostname()
	if err != nil {
		return nil, err
	}
	client, err := guestrpc.Dial(peer, time.Now().Add(5*time.Minute))
	if err != nil {
		return nil, err
	}
	var g Guests
	for _, entry := range strings.Split(nodes, ",") {
		name, ip, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not name=ip", envNodes, entry)
		}
		n := &Node{Name: name, DataIP: ip, Cmder: exec.Local{}}
		if name != self {
			n.Cmder, n.Devices = client, localdevice.Devices{OpenDevice: client.OpenDevice, FenceDevice: client.FenceDevice}
		}
		if err := n.start(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if name == self {
			g.Nodes = append([]*Node{n}, g.Nodes...)
		} else {
			g.Nodes = append(g.Nodes, n)
		}
	}
	if len(g.Nodes) < 2 || g.Nodes[0].Name != self {
		return nil, fmt.Errorf("%s=%q lists no second node or not this one (%s)", envNodes, nodes, self)
	}
	return &g, nil
}

// start makes (or adopts) the node's pool and its backends.
func (n *Node) start() error {
	if err := zfs.CreateFilePool(context.Background(), n.Cmder, poolName, poolFile, poolFileBytes); err != nil {
		return err
	}
	var err error
	if n.Pool, err = zfs.New(zfs.Options{Cmder: n.Cmder, Dataset: poolName, Devices: n.Devices}); err != nil {
		return err
	}
	n.DRBD, err = drbd.New(drbd.Options{Cmder: n.Cmder, Node: n.Name, Backing: n.Pool.DevicePath, Devices: n.Devices})
	return err
}

// Node finds a node by name.
func (g *Guests) Node(name string) *Node {
	for _, n := range g.Nodes {
		if n.Name == name {
			return n
		}
	}
	panic("integration: no node " + name)
}

// Address is where a node listens for a DRBD port.
func (n *Node) Address(port uint16) string { return fmt.Sprintf("%s:%d", n.DataIP, port) }

// Output runs a command on the node and returns its stdout.
func (n *Node) Output(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return exec.Output(n.Cmder.Command(ctx, name, args...))
}
