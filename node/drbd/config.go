package drbd

import (
	"fmt"
	"net"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// safeName is what baton puts into a resource file unquoted: resource and
// node names, and volume names in device paths.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)

// checkConfig validates a configuration for this node and returns the node's
// own entry. A name or address that would not survive being written into a
// resource file is refused before any file is written.
func checkConfig(config backend.ResourceConfig, node string, version Version) (backend.ResourceNode, error) {
	invalid := func(format string, args ...any) error {
		return backend.Refusal(backend.ErrInvalid, "drbdadm", "%s: invalid configuration: %s", config.Name, fmt.Sprintf(format, args...))
	}
	if !safeName.MatchString(config.Name) {
		return backend.ResourceNode{}, invalid("resource name %q", config.Name)
	}
	if version == V84 && len(config.Nodes) > 2 {
		return backend.ResourceNode{}, invalid("DRBD 8.4 replicates between two nodes, not %d", len(config.Nodes))
	}
	if version == V9 {
		if err := checkNodeIDs(config.Nodes); err != nil {
			return backend.ResourceNode{}, invalid("%v", err)
		}
	}
	var self backend.ResourceNode
	found := false
	for _, n := range config.Nodes {
		if !safeName.MatchString(n.Node) || (n.Volume != "" && !safeName.MatchString(n.Volume)) {
			return backend.ResourceNode{}, invalid("node %q with volume %q", n.Node, n.Volume)
		}
		if _, err := splitAddress(n.Address); err != nil {
			return backend.ResourceNode{}, invalid("node %s: %v", n.Node, err)
		}
		if n.Node == node {
			self, found = n, true
		}
	}
	if !found {
		return backend.ResourceNode{}, backend.Refusal(backend.ErrInvalid, "drbdadm",
			"'%s' not defined in your config (for this host).", config.Name)
	}
	return self, nil
}

// address is a node's listening address as DRBD's configuration writes it.
type address struct {
	family string // "ipv4" or "ipv6"
	host   string
	port   uint16
}

func splitAddress(hostPort string) (address, error) {
	host, portText, err := net.SplitHostPort(hostPort)
	if err != nil {
		return address{}, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return address{}, fmt.Errorf("port %q", portText)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return address{}, fmt.Errorf("host %q is not an IP address", host)
	}
	if ip.To4() != nil {
		return address{family: "ipv4", host: host, port: uint16(port)}, nil
	}
	return address{family: "ipv6", host: host, port: uint16(port)}, nil
}

// String is the address as a resource file and `drbdsetup show` write it:
// "ipv4 10.0.0.1:7789", "ipv6 [fd00::1]:7789".
func (a address) String() string {
	if a.family == "ipv6" {
		return fmt.Sprintf("ipv6 [%s]:%d", a.host, a.port)
	}
	return fmt.Sprintf("ipv4 %s:%d", a.host, a.port)
}

// hostPort is the address as backend.ResourceNode carries it.
func (a address) hostPort() string { return net.JoinHostPort(a.host, strconv.Itoa(int(a.port))) }

// parseConfAddress reads the words after "address": ["ipv4", "10.0.0.1:7789"].
func parseConfAddress(words []string) (address, error) {
	if len(words) != 2 || (words[0] != "ipv4" && words[0] != "ipv6") {
		return address{}, fmt.Errorf("address %q", strings.Join(words, " "))
	}
	a, err := splitAddress(words[1])
	if err != nil {
		return address{}, err
	}
	if a.family != words[0] {
		return address{}, fmt.Errorf("address %q is not %s", words[1], words[0])
	}
	return a, nil
}

// splitBrainNeverResolved ends a net section with the split-brain policy of
// both DRBD versions' files: DRBD never resolves a split brain by itself,
// whatever the roles; the nodes stay disconnected until the core decides.
const splitBrainNeverResolved = "\t\tafter-sb-0pri disconnect;\n\t\tafter-sb-1pri disconnect;\n\t\tafter-sb-2pri disconnect;\n\t}\n"

// startResourceFile begins a resource file as both DRBD versions' files
// begin: who wrote it, the global section and the resource's opening line.
func startResourceFile(name string) *strings.Builder {
	b := &strings.Builder{}
	b.WriteString("# Written by baton from the resource's allocation; baton rewrites it.\n")
	b.WriteString("global {\n\tusage-count no;\n}\n")
	fmt.Fprintf(b, "resource %s {\n", name)
	return b
}

// renderResource84 writes the resource file DRBD 8.4's drbdadm reads. It is
// the configuration replicatortest assumes: protocol C, one primary, fencing
// resource-only without a fence-peer handler, split brain never resolved
// automatically, internal metadata on the node's volume, and a resync that
// compares checksums (csums-alg) so a block the target already holds is not
// rewritten: a zvol's unchanged blocks then stay out of its next incremental
// snapshot, which is what the other site receives.
func renderResource84(config backend.ResourceConfig, backing func(volume string) string) string {
	b := startResourceFile(config.Name)
	b.WriteString("\tnet {\n\t\tprotocol C;\n\t\tcsums-alg sha256;\n" + splitBrainNeverResolved)
	b.WriteString("\tdisk {\n\t\tfencing resource-only;\n\t}\n")
	for _, n := range config.Nodes {
		a, _ := splitAddress(n.Address) // checkConfig has read it
		fmt.Fprintf(b, "\ton %s {\n", n.Node)
		fmt.Fprintf(b, "\t\tdevice minor %d;\n", config.Minor)
		if n.Volume == "" {
			b.WriteString("\t\tdisk none;\n")
		} else {
			fmt.Fprintf(b, "\t\tdisk %s;\n\t\tmeta-disk internal;\n", backing(n.Volume))
		}
		fmt.Fprintf(b, "\t\taddress %s;\n", a)
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// liveConfig is what `drbdsetup show` reports of a running resource.
type liveConfig struct {
	name          string
	minor         uint32
	local         address
	disk          string // the backing device's path, "" when diskless
	peerAddresses []address
	// DRBD 9 only: this node's node-id and, in the order of peerAddresses,
	// each connection's peer. 8.4's kernel knows neither.
	nodeID uint8
	peers  []livePeer
}

// parseShow84 reads DRBD 8.4's `drbdsetup show <res>`:
//
//	resource r0 {
//	    _remote_host { address ipv4 10.99.0.2:7789; }
//	    _this_host {
//	        address ipv4 10.99.0.1:7789;
//	        volume 0 { device minor 0; disk "/dev/zvol/tank/r0"; meta-disk internal; }
//	    }
//	}
func parseShow84(text string) (liveConfig, error) {
	resource, live, err := showResource(text)
	if err != nil {
		return liveConfig{}, err
	}
	this, ok := find(resource.block, "_this_host")
	if !ok {
		return liveConfig{}, fmt.Errorf("drbdsetup show of %s has no _this_host", live.name)
	}
	if s, ok := find(this.block, "address"); ok {
		if live.local, err = parseConfAddress(s.words[1:]); err != nil {
			return liveConfig{}, err
		}
	}
	volume, ok := find(this.block, "volume")
	if !ok {
		return liveConfig{}, fmt.Errorf("drbdsetup show of %s has no volume", live.name)
	}
	device, ok := find(volume.block, "device", "minor")
	if !ok || len(device.words) != 3 {
		return liveConfig{}, fmt.Errorf("drbdsetup show of %s has no minor", live.name)
	}
	minor, err := strconv.ParseUint(device.words[2], 10, 32)
	if err != nil {
		return liveConfig{}, fmt.Errorf("drbdsetup show of %s: minor %q", live.name, device.words[2])
	}
	live.minor = uint32(minor)
	// A detached (or never attached) volume shows no disk, or "disk none".
	if disk, ok := find(volume.block, "disk"); ok && !disk.isBlock && len(disk.words) == 2 && disk.words[1] != "none" {
		live.disk = disk.words[1]
	}
	for _, remote := range findAll(resource.block, "_remote_host") {
		if s, ok := find(remote.block, "address"); ok {
			a, err := parseConfAddress(s.words[1:])
			if err != nil {
				return liveConfig{}, err
			}
			live.peerAddresses = append(live.peerAddresses, a)
		}
	}
	return live, nil
}

// showResource reads the one resource block `drbdsetup show` prints, in
// DRBD 8.4's words and 9's alike, and the live configuration named after it.
func showResource(text string) (stanza, liveConfig, error) {
	stanzas, err := parseConf(text)
	if err != nil {
		return stanza{}, liveConfig{}, err
	}
	resource, ok := find(stanzas, "resource")
	if !ok || !resource.isBlock || len(resource.words) != 2 {
		return stanza{}, liveConfig{}, fmt.Errorf("drbdsetup show printed no resource")
	}
	return resource, liveConfig{name: resource.words[1]}, nil
}

// parseDump reads `drbdadm dump <res>`: the resource file as drbdadm
// understood it, one "on <node>" block per node. DRBD 8.4's file puts the
// disk in the "on" block, DRBD 9's in the "on" block's "volume 0".
func parseDump(text string) ([]backend.ResourceNode, error) {
	stanzas, err := parseConf(text)
	if err != nil {
		return nil, err
	}
	resource, ok := find(stanzas, "resource")
	if !ok || !resource.isBlock {
		return nil, fmt.Errorf("drbdadm dump printed no resource")
	}
	var nodes []backend.ResourceNode
	for i, on := range findAll(resource.block, "on") {
		if len(on.words) != 2 || !on.isBlock {
			return nil, fmt.Errorf("drbdadm dump has a malformed 'on' block")
		}
		n := backend.ResourceNode{Node: on.words[1], NodeID: uint8(i)}
		if s, ok := find(on.block, "address"); ok {
			a, err := parseConfAddress(s.words[1:])
			if err != nil {
				return nil, err
			}
			n.Address = a.hostPort()
		}
		if s, ok := diskOf(on.block); ok && s != "none" {
			n.Volume = path.Base(s)
		}
		if s, ok := find(on.block, "node-id"); ok && len(s.words) == 2 {
			id, err := strconv.ParseUint(s.words[1], 10, 8)
			if err != nil {
				return nil, fmt.Errorf("drbdadm dump: node-id %q", s.words[1])
			}
			n.NodeID = uint8(id)
		}
		if i == maxConnections {
			return nil, fmt.Errorf("drbdadm dump lists more than %d nodes", maxConnections)
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// diskOf reads the disk statement of an "on" block: its own, or else its
// first volume's (DRBD 9's drbdadm dump nests device and disk in "volume N").
// A `disk { ... }` block of options is not the statement.
func diskOf(on []stanza) (string, bool) {
	for _, s := range findAll(on, "disk") {
		if !s.isBlock && len(s.words) == 2 {
			return s.words[1], true
		}
	}
	if volume, ok := find(on, "volume"); ok && volume.isBlock {
		for _, s := range findAll(volume.block, "disk") {
			if !s.isBlock && len(s.words) == 2 {
				return s.words[1], true
			}
		}
	}
	return "", false
}
