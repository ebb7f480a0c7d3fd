package drbd

import (
	"fmt"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// maxNodeID9 is DRBD 9's highest node-id: node-ids stay below
// DRBD_NODE_ID_MAX, which is DRBD_PEERS_MAX, 32 (drbd-headers, linux/drbd.h).
// The core allocates 0..15, the lowest free among a resource's replicas,
// which also keeps within drbd.conf(5)'s "ranges from 0 to 16".
const maxNodeID9 = 31

// checkNodeIDs refuses node-ids DRBD 9 cannot take. They come from the core's
// allocation (backend.ResourceNode.NodeID) as they are: DRBD 9 records a
// node's id in its metadata and gives each peer's id a bitmap slot, so baton
// never renumbers a resource. Two nodes sharing an id are a broken
// allocation, refused before a resource file is written, as drbdadm would
// refuse the file.
func checkNodeIDs(nodes []backend.ResourceNode) error {
	seen := map[uint8]string{}
	for _, n := range nodes {
		if n.NodeID > maxNodeID9 {
			return fmt.Errorf("node-id %d of %s is beyond DRBD 9's 0..%d", n.NodeID, n.Node, maxNodeID9)
		}
		if other, ok := seen[n.NodeID]; ok {
			return fmt.Errorf("node-id %d is both %s's and %s's", n.NodeID, other, n.Node)
		}
		seen[n.NodeID] = n.Node
	}
	return nil
}

// renderResource9 writes the resource file DRBD 9's drbdadm reads, from the
// same allocation and with the same policy as renderResource84: protocol C,
// fencing resource-only without a fence-peer handler, split brain never
// resolved automatically, internal metadata on the node's volume, a
// diskless node "disk none". What DRBD 9 words differently, from drbd.conf(5)
// and drbdsetup-options of drbd-utils 9 (documentation/v9/drbd.conf.xml.in,
// documentation/v9/drbdsetup-options.xml):
//
//   - fencing is a "net" option in DRBD 9 (8.4 has it in "disk");
//   - each "on" section carries the node's node-id, which DRBD 9 requires,
//     and nests device, disk and meta-disk in "volume 0";
//   - "connection-mesh { hosts ...; }" connects every node with every other,
//     each connection named after its peer's "on" section; drbdadm makes
//     the implicit connection only between exactly two hosts;
//   - "options { auto-promote no; }": DRBD 9 promotes a Secondary that is
//     opened for writing unless told not to (auto-promote defaults to yes).
//     The core decides roles; opening a Secondary's device stays a refusal,
//     as it is in 8.4;
//   - quorum stays off, DRBD 9's default, as 8.4 has none: turning it on
//     changes when a Primary freezes, which is the core's policy to set.
//
// drbdadm 9.22 reads the file (testdata/dump9: its dump, and its dry run of
// up: new-resource --auto-promote=no, new-peer --_name=<peer>
// --fencing=resource-only --protocol=C, peer-device-options --bitmap=no
// towards a diskless peer).
func renderResource9(config backend.ResourceConfig, backing func(volume string) string) string {
	b := startResourceFile(config.Name)
	b.WriteString("\toptions {\n\t\tauto-promote no;\n\t}\n")
	b.WriteString("\tnet {\n\t\tprotocol C;\n\t\tfencing resource-only;\n\t\tcsums-alg sha256;\n" + splitBrainNeverResolved)
	hosts := make([]string, 0, len(config.Nodes))
	for _, n := range config.Nodes {
		a, _ := splitAddress(n.Address) // checkConfig has read it
		fmt.Fprintf(b, "\ton %s {\n", n.Node)
		fmt.Fprintf(b, "\t\tnode-id %d;\n", n.NodeID)
		fmt.Fprintf(b, "\t\taddress %s;\n", a)
		b.WriteString("\t\tvolume 0 {\n")
		fmt.Fprintf(b, "\t\t\tdevice minor %d;\n", config.Minor)
		if n.Volume == "" {
			b.WriteString("\t\t\tdisk none;\n")
		} else {
			fmt.Fprintf(b, "\t\t\tdisk %s;\n\t\t\tmeta-disk internal;\n", backing(n.Volume))
		}
		b.WriteString("\t\t}\n\t}\n")
		hosts = append(hosts, n.Node)
	}
	if len(hosts) > 1 {
		fmt.Fprintf(b, "\tconnection-mesh {\n\t\thosts %s;\n\t}\n", strings.Join(hosts, " "))
	}
	b.WriteString("}\n")
	return b.String()
}
