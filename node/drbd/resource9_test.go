package drbd

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata/ from the current output")

// threeNodes is an allocation of three replicas, one of them diskless, with
// node-ids as the core allocates them (lowest free).
var threeNodes = backend.ResourceConfig{Name: "pvc-1", Minor: 1007, Port: 7007, Nodes: []backend.ResourceNode{
	{Node: "nodea", NodeID: 0, Address: "10.99.0.1:7007", Volume: "pvc-1"},
	{Node: "nodeb", NodeID: 1, Address: "10.99.0.2:7007", Volume: "pvc-1"},
	{Node: "witness", NodeID: 2, Address: "10.99.0.3:7007"},
}}

func zvol(volume string) string { return "/dev/zvol/tank/" + volume }

// TestResource9Golden pins the DRBD 9 resource file byte for byte; `go test
// ./node/drbd -run TestResource9Golden -rewrite` accepts a change.
func TestResource9Golden(t *testing.T) {
	got := renderResource9(threeNodes, zvol)
	path := filepath.Join("testdata", "resource9-three-nodes.res")
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("the DRBD 9 resource file changed:\n%s\nwant:\n%s", got, want)
	}
}

// The DRBD 9 file reads back, through the parser of `drbdadm dump`, as the
// allocation it was written from: names, node-ids, addresses and volumes.
func TestResource9ReadsBack(t *testing.T) {
	nodes, err := parseDump(renderResource9(threeNodes, zvol))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(threeNodes.Nodes) {
		t.Fatalf("read back %+v", nodes)
	}
	for i, n := range nodes {
		if n != threeNodes.Nodes[i] {
			t.Errorf("node %d read back as %+v, want %+v", i, n, threeNodes.Nodes[i])
		}
	}
	stanzas, _ := parseConf(renderResource9(threeNodes, zvol))
	resource, _ := find(stanzas, "resource")
	net, _ := find(resource.block, "net")
	if _, ok := find(net.block, "fencing", "resource-only"); !ok {
		t.Error("fencing is not a net option: DRBD 9 moved it there from disk")
	}
	if _, ok := find(resource.block, "disk"); ok {
		t.Error("the DRBD 9 file has a disk section; its one 8.4 option (fencing) is a net option in 9")
	}
	mesh, ok := find(resource.block, "connection-mesh")
	if hosts, _ := find(mesh.block, "hosts"); !ok || len(hosts.words) != 4 {
		t.Errorf("connection-mesh = %+v, want the three hosts", mesh)
	}
}

// A single node has no one to connect to: no connection-mesh.
func TestResource9OfOneNodeHasNoMesh(t *testing.T) {
	one := threeNodes
	one.Nodes = threeNodes.Nodes[:1]
	stanzas, err := parseConf(renderResource9(one, zvol))
	if err != nil {
		t.Fatal(err)
	}
	resource, _ := find(stanzas, "resource")
	if _, ok := find(resource.block, "connection-mesh"); ok {
		t.Fatal("a one-node resource has a connection-mesh")
	}
}

func TestCheckConfigOfDRBD9RefusesBrokenNodeIDs(t *testing.T) {
	if _, err := checkConfig(threeNodes, "nodea", V9); err != nil {
		t.Fatalf("the allocation: %v", err)
	}
	twice := threeNodes
	twice.Nodes = append([]backend.ResourceNode(nil), threeNodes.Nodes...)
	twice.Nodes[2].NodeID = 1
	beyond := threeNodes
	beyond.Nodes = append([]backend.ResourceNode(nil), threeNodes.Nodes...)
	beyond.Nodes[2].NodeID = 32
	for name, config := range map[string]backend.ResourceConfig{"a node-id twice": twice, "a node-id beyond 31": beyond} {
		if _, err := checkConfig(config, "nodea", V9); !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	// DRBD 8.4 has no node-ids; its two-node limit refuses three nodes.
	if _, err := checkConfig(threeNodes, "nodea", V84); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("three nodes on 8.4: %v, want ErrInvalid", err)
	}
}

// drbdadm 9.22's own dump of the golden file reads back as the allocation.
func TestParseDumpOfDrbdadm9(t *testing.T) {
	nodes, err := parseDump(sample(t, "dump9", "three-nodes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 3 || nodes[0] != threeNodes.Nodes[0] || nodes[1] != threeNodes.Nodes[1] || nodes[2] != threeNodes.Nodes[2] {
		t.Fatalf("parseDump = %+v, want %+v", nodes, threeNodes.Nodes)
	}
}

// Status finds a peer's connection by its name; drbdadm 9 names each
// connection (new-peer --_name) after the peer's "on" section, with the
// peer's node-id, as its dry run of `up` on the golden file shows.
func TestDrbdadm9NamesConnectionsAfterThePeers(t *testing.T) {
	var peers []string
	for _, line := range strings.Split(sample(t, "dump9", "up-dry-run.txt"), "\n") {
		words := strings.Fields(line)
		if len(words) >= 5 && strings.HasSuffix(words[0], "drbdsetup") && words[1] == "new-peer" {
			peers = append(peers, words[3]+" "+words[4])
		}
	}
	var want []string
	for _, n := range threeNodes.Nodes[1:] {
		want = append(want, fmt.Sprintf("%d --_name=%s", n.NodeID, n.Node))
	}
	if strings.Join(peers, ",") != strings.Join(want, ",") {
		t.Fatalf("drbdadm made peers %q, want %q", peers, want)
	}
}
