package drbd

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/baton-dr/baton/storage/backend"
)

// liveStatus is what `drbdsetup status <res> --verbose --statistics` prints:
// the resource, its device (baton's resources have one volume) and one
// connection per peer. DRBD 8.4's drbdsetup prints the same layout as 9's,
// with every connection named "peer".
//
//	r0 role:Primary suspended:no
//	    write-ordering:flush
//	  volume:0 minor:0 disk:UpToDate
//	      size:32764 read:0 written:4 al-writes:0 bm-writes:0 ...
//	  peer connection:Connected role:Secondary congested:no
//	    volume:0 replication:Established peer-disk:UpToDate resync-suspended:no
//	        received:0 sent:4 out-of-sync:0 pending:0 unacked:0
type liveStatus struct {
	name        string
	role        string
	disk        string
	quorum      string // DRBD 9 only: "yes" or "no"
	minor       string
	connections []liveConnection
}

type liveConnection struct {
	name         string // DRBD 9: the peer's node name; 8.4: "peer"
	peerNodeID   uint8  // DRBD 9's events2 only: the peer's node-id
	hasNodeID    bool   // peerNodeID is DRBD's, not a zero value
	connection   string // connection: StandAlone, Connecting, Connected, ...
	role         string // the peer's role: Primary, Secondary, Unknown
	replication  string // the peer device's replication: Off, Established, SyncSource, ...
	peerDisk     string // peer-disk: UpToDate, DUnknown, ...
	outOfSyncKiB uint64
}

// maxConnections bounds a parse: DRBD connects a node to at most 31 peers.
const maxConnections = 32

// parseStatus reads the status of one resource. It reads tokens, not lines:
// drbdsetup wraps long lines, and keys identify what they describe. A word
// without a colon names the resource (the first) or opens a connection;
// "volume:N" opens the device, or a peer device once a connection is open.
func parseStatus(out []byte) (liveStatus, error) {
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return liveStatus{}, fmt.Errorf("drbdsetup status printed nothing")
	}
	if strings.Contains(fields[0], ":") {
		return liveStatus{}, fmt.Errorf("drbdsetup status does not start with a resource name: %q", fields[0])
	}
	s := liveStatus{name: fields[0]}
	var conn *liveConnection
	for _, field := range fields[1:] {
		key, value, ok := strings.Cut(field, ":")
		if !ok {
			if len(s.connections) == maxConnections {
				return liveStatus{}, fmt.Errorf("drbdsetup status lists more than %d connections", maxConnections)
			}
			s.connections = append(s.connections, liveConnection{name: field})
			conn = &s.connections[len(s.connections)-1]
			continue
		}
		if conn == nil {
			s.set(key, value)
			continue
		}
		if err := conn.set(key, value); err != nil {
			return liveStatus{}, err
		}
	}
	if s.role == "" {
		return liveStatus{}, fmt.Errorf("drbdsetup status of %s has no role", s.name)
	}
	return s, nil
}

// set takes a key of the resource or its device. A resource of several
// volumes is not baton's: the first volume's values stand.
func (s *liveStatus) set(key, value string) {
	switch key {
	case "role":
		s.role = value
	case "disk":
		if s.disk == "" {
			s.disk = value
		}
	case "minor":
		if s.minor == "" {
			s.minor = value
		}
	case "quorum":
		s.quorum = value
	}
}

func (c *liveConnection) set(key, value string) error {
	switch key {
	case "connection":
		c.connection = value
	case "role":
		c.role = value
	case "replication":
		c.replication = value
	case "peer-disk":
		c.peerDisk = value
	case "out-of-sync":
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil || n > 1<<53 {
			return fmt.Errorf("drbdsetup status printed out-of-sync:%q", value)
		}
		c.outOfSyncKiB = n
	}
	return nil
}

// connectedStates are the replication states of a connection that carries
// data: DRBD 9's names, which 8.4's drbdsetup prints too (Established for
// Connected). Off and every state before it are a connection still forming.
var connectedStates = map[string]bool{
	"Established": true, "StartingSyncS": true, "StartingSyncT": true, "WFBitMapS": true, "WFBitMapT": true,
	"WFSyncUUID": true, "SyncSource": true, "SyncTarget": true, "VerifyS": true, "VerifyT": true,
	"PausedSyncS": true, "PausedSyncT": true, "Ahead": true, "Behind": true,
}

func connectionState(c liveConnection) backend.ConnectionState {
	switch {
	case connectedStates[c.replication]:
		return backend.Connected
	case c.connection == "StandAlone":
		return backend.StandAlone
	}
	// Connecting, and the passing states of a connection being torn down or
	// retried (Disconnecting, Unconnected, Timeout, BrokenPipe, NetworkFailure,
	// ProtocolError, TearDown): DRBD goes on trying.
	return backend.Connecting
}

// diskState maps DRBD's disk states onto the four the core tells apart.
// Attaching and Negotiating pass on the way to a known state; a Consistent
// disk is one DRBD cannot yet vouch for, like DUnknown.
func diskState(s string) backend.DiskState {
	switch s {
	case "UpToDate":
		return backend.UpToDate
	case "Outdated", "Consistent", "DUnknown":
		return backend.Outdated
	case "Inconsistent", "Attaching", "Negotiating":
		return backend.Inconsistent
	}
	return backend.Diskless // Diskless, Failed, Detaching
}

// resourceStatus maps a parsed status onto backend's, naming the peers from
// the configuration: DRBD 8.4 calls its one connection "peer". A configured
// peer without a connection is StandAlone. A peer that is not Connected is
// Secondary and Outdated (Diskless when configured without a disk), as
// backend.PeerStatus says: DRBD's Unknown and DUnknown are not facts the core
// may count on.
func resourceStatus(live liveStatus, peers []backend.ResourceNode, version Version) backend.ResourceStatus {
	status := backend.ResourceStatus{Name: live.name, Role: backend.Secondary, Disk: diskState(live.disk), Quorum: live.quorum != "no"}
	if live.role == "Primary" {
		status.Role = backend.Primary
	}
	if peers == nil {
		for _, c := range live.connections {
			peers = append(peers, backend.ResourceNode{Node: c.name, Volume: c.name})
		}
	}
	for _, peer := range peers {
		p := backend.PeerStatus{Node: peer.Node, Connection: backend.StandAlone, Role: backend.Secondary, Disk: backend.Outdated}
		if c, ok := connectionOf(live, peer, version); ok {
			p.Connection = connectionState(c)
			p.OutOfSyncBytes = c.outOfSyncKiB << 10
			if p.Connection == backend.Connected {
				p.Disk = diskState(c.peerDisk)
				if c.role == "Primary" {
					p.Role = backend.Primary
				}
			}
		}
		if peer.Volume == "" {
			p.Disk = backend.Diskless
		}
		status.Peers = append(status.Peers, p)
	}
	sort.Slice(status.Peers, func(i, j int) bool { return status.Peers[i].Node < status.Peers[j].Node })
	return status
}

// connectionOf finds a configured peer's connection. DRBD 9 names a
// connection after the peer's "on" section (drbdadm passes it as the
// connection's _name), so the name decides; a connection renamed behind
// baton's back is still found by the node-id the resource file gave the peer.
func connectionOf(live liveStatus, peer backend.ResourceNode, version Version) (liveConnection, bool) {
	if version == V84 && len(live.connections) == 1 {
		return live.connections[0], true
	}
	for _, c := range live.connections {
		if c.name == peer.Node {
			return c, true
		}
	}
	if version == V9 {
		for _, c := range live.connections {
			if c.hasNodeID && c.peerNodeID == peer.NodeID {
				return c, true
			}
		}
	}
	return liveConnection{}, false
}
