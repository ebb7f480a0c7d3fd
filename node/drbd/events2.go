package drbd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errNoResourceEvents is events2's answer for a resource DRBD does not run:
// the end of the initial state ("exists -") with nothing before it.
var errNoResourceEvents = errors.New("drbdsetup events2 lists no resource")

// maxEvents2Lines bounds a parse: a resource line, a device line per volume,
// and per peer a connection, a path and a peer-device line per volume.
const maxEvents2Lines = 4096

// DRBD 9's state names (drbd-headers, drbd_strings.c). A word outside them
// is no state this parser can vouch for (a colour escape, a truncated line),
// and the line is refused rather than mapped to a guess.
var (
	events2Roles       = setOf("Primary", "Secondary", "Unknown")
	events2DiskStates  = setOf("Diskless", "Attaching", "Detaching", "Failed", "Negotiating", "Inconsistent", "Outdated", "DUnknown", "Consistent", "UpToDate")
	events2ConnStates  = setOf("StandAlone", "Disconnecting", "Unconnected", "Timeout", "BrokenPipe", "NetworkFailure", "ProtocolError", "TearDown", "Connecting", "Connected")
	events2ReplStates  = setOf("Off", "Established", "StartingSyncS", "StartingSyncT", "WFBitMapS", "WFBitMapT", "WFSyncUUID", "SyncSource", "SyncTarget", "VerifyS", "VerifyT", "PausedSyncS", "PausedSyncT", "Ahead", "Behind")
	events2YesNo       = setOf("yes", "no")
	events2ObjectTypes = setOf("resource", "device", "connection", "peer-device", "path")
)

func setOf(words ...string) map[string]bool {
	set := make(map[string]bool, len(words))
	for _, w := range words {
		set[w] = true
	}
	return set
}

// events2Line is one "exists <object> key:value ..." line.
type events2Line struct {
	number int // 1-based, for errors
	text   string
	object string
	fields map[string]string
}

func (l events2Line) errorf(format string, args ...any) error {
	return fmt.Errorf("drbdsetup events2 line %d %q: %s", l.number, l.text, fmt.Sprintf(format, args...))
}

// parseEvents2 reads DRBD 9's `drbdsetup events2 --now --statistics <res>`:
// the objects that exist, one line each, and "exists -" once the initial
// state is complete (drbd-utils, user/v9/drbdsetup_events2.c; the lines as
// in drbd-utils' tests/v9/events2-*.test, LINSTOR's DrbdEventsMonitorTest
// and drbd-reactor's events.rs):
//
//	exists resource name:r0 role:Primary suspended:no write-ordering:flush
//	exists connection name:r0 peer-node-id:1 conn-name:nodeb connection:Connected role:Secondary congested:no
//	exists device name:r0 volume:0 minor:0 disk:UpToDate client:no quorum:yes size:32764 ...
//	exists peer-device name:r0 peer-node-id:1 conn-name:nodeb volume:0 replication:Established peer-disk:UpToDate ... out-of-sync:0 ...
//	exists path name:r0 peer-node-id:1 conn-name:nodeb local:ipv4:10.0.0.1:7789 peer:ipv4:10.0.0.2:7789 established:yes
//	exists -
//
// It fills the liveStatus the 8.4 status parser fills. Output that stops
// before "exists -" is a partial state and refused; so is any line that is
// not an "exists" line, names another resource, lacks a field the status
// needs, or carries a state DRBD does not name. Every refusal names the line.
// Keys it does not know are skipped: drbd-utils adds them across releases.
func parseEvents2(out []byte) (liveStatus, error) {
	lines, err := splitEvents2(out)
	if err != nil {
		return liveStatus{}, err
	}
	var b events2Builder
	for _, line := range lines {
		if err := b.add(line); err != nil {
			return liveStatus{}, err
		}
	}
	return b.status()
}

// splitEvents2 cuts the output into its object lines, checking that the
// initial state ends with "exists -" and nothing follows it.
func splitEvents2(out []byte) ([]events2Line, error) {
	var lines []events2Line
	done := false
	for i, text := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(text) == "" {
			continue
		}
		line := events2Line{number: i + 1, text: text}
		if i >= maxEvents2Lines {
			return nil, line.errorf("more than %d lines", maxEvents2Lines)
		}
		if done {
			return nil, line.errorf("output after the end of the initial state")
		}
		words := strings.Fields(text)
		if words[0] != "exists" || len(words) < 2 {
			return nil, line.errorf("not an \"exists\" line: events2 --now prints only the state that exists")
		}
		if words[1] == "-" {
			if len(words) != 2 {
				return nil, line.errorf("the end of the initial state carries fields")
			}
			done = true
			continue
		}
		if !events2ObjectTypes[words[1]] {
			return nil, line.errorf("unknown object %q", words[1])
		}
		line.object = words[1]
		fields, err := events2Fields(line, words[2:])
		if err != nil {
			return nil, err
		}
		line.fields = fields
		lines = append(lines, line)
	}
	if !done {
		return nil, fmt.Errorf("drbdsetup events2 ended before \"exists -\": the state it printed is partial")
	}
	return lines, nil
}

// events2Fields reads "key:value" words; a value may hold colons
// ("local:ipv4:10.0.0.1:7789"), a key may not repeat.
func events2Fields(line events2Line, words []string) (map[string]string, error) {
	fields := make(map[string]string, len(words))
	for _, word := range words {
		key, value, ok := strings.Cut(word, ":")
		if !ok || key == "" {
			return nil, line.errorf("%q is no key:value field", word)
		}
		if _, dup := fields[key]; dup {
			return nil, line.errorf("field %q twice", key)
		}
		fields[key] = value
	}
	if !safeName.MatchString(fields["name"]) {
		return nil, line.errorf("no resource name")
	}
	return fields, nil
}

// events2Builder gathers the objects of one resource. Peer devices and paths
// belong to a connection that may come after them, so they are joined to
// their connections once every line is read.
type events2Builder struct {
	live        liveStatus
	hasResource bool
	volumes     map[uint32]bool
	connections map[uint8]int // peer-node-id to its index in live.connections
	ofPeers     []events2Line // peer-device and path lines, joined at the end
}

func (b *events2Builder) add(line events2Line) error {
	name := line.fields["name"]
	if b.live.name == "" {
		b.live.name = name
	} else if name != b.live.name {
		return line.errorf("resource %q among lines of %q", name, b.live.name)
	}
	switch line.object {
	case "resource":
		return b.addResource(line)
	case "device":
		return b.addDevice(line)
	case "connection":
		return b.addConnection(line)
	}
	if _, err := events2PeerNodeID(line); err != nil {
		return err
	}
	b.ofPeers = append(b.ofPeers, line)
	return nil
}

func (b *events2Builder) addResource(line events2Line) error {
	if b.hasResource {
		return line.errorf("a second resource line")
	}
	role, err := events2State(line, "role", events2Roles)
	if err != nil {
		return err
	}
	b.hasResource, b.live.role = true, role
	return nil
}

// addDevice takes the device of one volume. A resource of several volumes is
// not baton's: the first volume's values stand, as in the 8.4 parser.
func (b *events2Builder) addDevice(line events2Line) error {
	volume, err := events2Uint(line, "volume", 32)
	if err != nil {
		return err
	}
	minor, err := events2Uint(line, "minor", 32)
	if err != nil {
		return err
	}
	disk, err := events2State(line, "disk", events2DiskStates)
	if err != nil {
		return err
	}
	quorum, hasQuorum := line.fields["quorum"]
	if hasQuorum && !events2YesNo[quorum] {
		return line.errorf("quorum:%q is neither yes nor no", quorum)
	}
	if b.volumes == nil {
		b.volumes = map[uint32]bool{}
	}
	if b.volumes[uint32(volume)] {
		return line.errorf("volume %d twice", volume)
	}
	b.volumes[uint32(volume)] = true
	if len(b.volumes) == 1 {
		b.live.disk, b.live.minor, b.live.quorum = disk, strconv.FormatUint(minor, 10), quorum
	}
	return nil
}

func (b *events2Builder) addConnection(line events2Line) error {
	id, err := events2PeerNodeID(line)
	if err != nil {
		return err
	}
	connection, err := events2State(line, "connection", events2ConnStates)
	if err != nil {
		return err
	}
	role, err := events2State(line, "role", events2Roles)
	if err != nil {
		return err
	}
	if b.connections == nil {
		b.connections = map[uint8]int{}
	}
	if _, dup := b.connections[id]; dup {
		return line.errorf("a second connection to peer-node-id %d", id)
	}
	if len(b.live.connections) == maxConnections {
		return line.errorf("more than %d connections", maxConnections)
	}
	b.connections[id] = len(b.live.connections)
	b.live.connections = append(b.live.connections, liveConnection{
		name: line.fields["conn-name"], peerNodeID: id, hasNodeID: true, connection: connection, role: role,
	})
	return nil
}

// status joins the peer devices to their connections and returns the
// resource's state, or why it is not one.
func (b *events2Builder) status() (liveStatus, error) {
	if !b.hasResource {
		if b.live.name == "" {
			return liveStatus{}, errNoResourceEvents
		}
		return liveStatus{}, fmt.Errorf("drbdsetup events2 lists objects of %s but not the resource", b.live.name)
	}
	joined := map[uint8]bool{} // connections whose first volume's peer device is in
	for _, line := range b.ofPeers {
		id, _ := events2PeerNodeID(line) // add has read it
		i, ok := b.connections[id]
		if !ok {
			return liveStatus{}, line.errorf("a %s of peer-node-id %d, which has no connection line", line.object, id)
		}
		c := &b.live.connections[i]
		if line.fields["conn-name"] != c.name {
			return liveStatus{}, line.errorf("conn-name %q, the connection's is %q", line.fields["conn-name"], c.name)
		}
		if line.object != "peer-device" {
			continue
		}
		if err := c.setPeerDevice(line, !joined[id]); err != nil {
			return liveStatus{}, err
		}
		joined[id] = true
	}
	return b.live, nil
}

// setPeerDevice reads a peer device; only the first volume's values are
// kept, as for the device.
func (c *liveConnection) setPeerDevice(line events2Line, first bool) error {
	if _, err := events2Uint(line, "volume", 32); err != nil {
		return err
	}
	replication, err := events2State(line, "replication", events2ReplStates)
	if err != nil {
		return err
	}
	peerDisk, err := events2State(line, "peer-disk", events2DiskStates)
	if err != nil {
		return err
	}
	var outOfSync uint64
	if text, ok := line.fields["out-of-sync"]; ok {
		// KiB, like `drbdsetup status`; above 2^53 KiB it is no disk's.
		if outOfSync, err = strconv.ParseUint(text, 10, 64); err != nil || outOfSync > 1<<53 {
			return line.errorf("out-of-sync:%q", text)
		}
	}
	if first {
		c.replication, c.peerDisk, c.outOfSyncKiB = replication, peerDisk, outOfSync
	}
	return nil
}

func events2PeerNodeID(line events2Line) (uint8, error) {
	id, err := events2Uint(line, "peer-node-id", 8)
	if err != nil {
		return 0, err
	}
	if id > maxNodeID9 {
		return 0, line.errorf("peer-node-id %d is beyond DRBD's 0..%d", id, maxNodeID9)
	}
	if line.fields["conn-name"] == "" {
		return 0, line.errorf("no conn-name")
	}
	return uint8(id), nil
}

func events2Uint(line events2Line, key string, bits int) (uint64, error) {
	text, ok := line.fields[key]
	if !ok {
		return 0, line.errorf("no %s", key)
	}
	n, err := strconv.ParseUint(text, 10, bits)
	if err != nil {
		return 0, line.errorf("%s:%q is no number", key, text)
	}
	return n, nil
}

func events2State(line events2Line, key string, names map[string]bool) (string, error) {
	value, ok := line.fields[key]
	if !ok {
		return "", line.errorf("no %s", key)
	}
	if !names[value] {
		return "", line.errorf("%s:%q is no state DRBD 9 names", key, value)
	}
	return value, nil
}
