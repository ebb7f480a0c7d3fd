package drbd

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// The configured peers the samples are seen with, as `drbdadm dump` of
// baton's resource file lists them.
var (
	peersOfA = []backend.ResourceNode{{Node: "nodeb", NodeID: 1, Volume: "rt-x"}}
	peersOfB = []backend.ResourceNode{{Node: "nodea", NodeID: 0, Volume: "rt-x"}}
	peersOfW = []backend.ResourceNode{{Node: "nodea", NodeID: 0, Volume: "rt-x"}, {Node: "nodeb", NodeID: 1, Volume: "rt-x"}}
	threeOfA = []backend.ResourceNode{{Node: "nodeb", NodeID: 1, Volume: "rt-x"}, {Node: "witness", NodeID: 2}}
	threeOfX = []backend.ResourceNode{{Node: "nodeb", NodeID: 1, Volume: "rt-x"}, {Node: "nodec", NodeID: 2, Volume: "rt-x"}}
	threeOfB = []backend.ResourceNode{{Node: "nodea", NodeID: 0, Volume: "rt-x"}, {Node: "nodec", NodeID: 2, Volume: "rt-x"}}
)

func TestEvents2Samples(t *testing.T) {
	peer := func(node string, c backend.ConnectionState, r backend.Role, d backend.DiskState, oosKiB uint64) backend.PeerStatus {
		return backend.PeerStatus{Node: node, Connection: c, Role: r, Disk: d, OutOfSyncBytes: oosKiB << 10}
	}
	for _, c := range []struct {
		file  string
		peers []backend.ResourceNode
		want  backend.ResourceStatus
	}{
		{"connected-pair.txt", peersOfA, backend.ResourceStatus{Role: backend.Primary, Disk: backend.UpToDate, Quorum: true,
			Peers: []backend.PeerStatus{peer("nodeb", backend.Connected, backend.Secondary, backend.UpToDate, 0)}}},
		{"sync-source.txt", peersOfA, backend.ResourceStatus{Role: backend.Primary, Disk: backend.UpToDate, Quorum: true,
			Peers: []backend.PeerStatus{peer("nodeb", backend.Connected, backend.Secondary, backend.Inconsistent, 2500)}}},
		{"sync-target.txt", peersOfB, backend.ResourceStatus{Role: backend.Secondary, Disk: backend.Inconsistent, Quorum: true,
			Peers: []backend.PeerStatus{peer("nodea", backend.Connected, backend.Primary, backend.UpToDate, 8192)}}},
		// Not connected: Secondary and Outdated whatever DRBD says (Unknown, DUnknown).
		{"standalone.txt", peersOfA, backend.ResourceStatus{Role: backend.Primary, Disk: backend.UpToDate, Quorum: true,
			Peers: []backend.PeerStatus{peer("nodeb", backend.StandAlone, backend.Secondary, backend.Outdated, 12)}}},
		{"connecting.txt", peersOfA, backend.ResourceStatus{Role: backend.Primary, Disk: backend.UpToDate, Quorum: true,
			Peers: []backend.PeerStatus{peer("nodeb", backend.Connecting, backend.Secondary, backend.Outdated, 24)}}},
		{"three-nodes.txt", threeOfX, backend.ResourceStatus{Role: backend.Secondary, Disk: backend.UpToDate, Quorum: true,
			Peers: []backend.PeerStatus{
				peer("nodeb", backend.Connected, backend.Primary, backend.UpToDate, 0),
				peer("nodec", backend.Connected, backend.Secondary, backend.UpToDate, 0)}}},
		{"diskless-peer.txt", threeOfA, backend.ResourceStatus{Role: backend.Primary, Disk: backend.UpToDate, Quorum: true,
			Peers: []backend.PeerStatus{
				peer("nodeb", backend.Connecting, backend.Secondary, backend.Outdated, 4),
				peer("witness", backend.Connected, backend.Secondary, backend.Diskless, 0)}}},
		{"diskless-self.txt", peersOfW, backend.ResourceStatus{Role: backend.Secondary, Disk: backend.Diskless, Quorum: true,
			Peers: []backend.PeerStatus{
				peer("nodea", backend.Connected, backend.Primary, backend.UpToDate, 0),
				// Configured, but this node has no connection to it.
				peer("nodeb", backend.StandAlone, backend.Secondary, backend.Outdated, 0)}}},
		{"quorum-lost.txt", threeOfB, backend.ResourceStatus{Role: backend.Secondary, Disk: backend.Outdated, Quorum: false,
			Peers: []backend.PeerStatus{
				peer("nodea", backend.Connecting, backend.Secondary, backend.Outdated, 0),
				peer("nodec", backend.Connecting, backend.Secondary, backend.Outdated, 0)}}},
	} {
		t.Run(c.file, func(t *testing.T) {
			live, err := parseEvents2([]byte(sample(t, "events2", c.file)))
			if err != nil {
				t.Fatal(err)
			}
			if live.minor != "1000" {
				t.Errorf("minor %q, want 1000", live.minor)
			}
			c.want.Name = "rt-x"
			if got := resourceStatus(live, c.peers, V9); !equalStatus(got, c.want) {
				t.Fatalf("status = %+v\nwant     %+v", got, c.want)
			}
		})
	}
}

// Without the resource file, the peers are the connections, named by DRBD.
func TestEvents2NamesPeersWithoutAResourceFile(t *testing.T) {
	live, err := parseEvents2([]byte(sample(t, "events2", "diskless-peer.txt")))
	if err != nil {
		t.Fatal(err)
	}
	got := resourceStatus(live, nil, V9)
	if len(got.Peers) != 2 || got.Peers[0].Node != "nodeb" || got.Peers[1].Node != "witness" ||
		got.Peers[1].Disk != backend.Diskless || got.Peers[1].Connection != backend.Connected {
		t.Fatalf("status = %+v", got)
	}
}

// A peer the resource file names differently from the connection is found
// by the node-id the file gives it.
func TestEvents2FindsARenamedPeerByNodeID(t *testing.T) {
	live, err := parseEvents2([]byte(sample(t, "events2", "connected-pair.txt")))
	if err != nil {
		t.Fatal(err)
	}
	got := resourceStatus(live, []backend.ResourceNode{{Node: "nodeb.example", NodeID: 1, Volume: "rt-x"}}, V9)
	if len(got.Peers) != 1 || got.Peers[0].Connection != backend.Connected || got.Peers[0].Disk != backend.UpToDate {
		t.Fatalf("status = %+v", got)
	}
}

func TestEvents2OfAResourceDRBDDoesNotRun(t *testing.T) {
	if _, err := parseEvents2([]byte(sample(t, "events2", "no-resource.txt"))); !errors.Is(err, errNoResourceEvents) {
		t.Fatalf("events2 of no resource: %v, want errNoResourceEvents", err)
	}
}

// Output that is not a whole, well-formed initial state is refused, naming
// the line, never mapped to a status.
func TestEvents2RefusesMalformedOutput(t *testing.T) {
	pair := sample(t, "events2", "connected-pair.txt")
	without := func(line string) string { return strings.Replace(pair, line, "", 1) }
	replace := func(old, new string) string { return strings.Replace(pair, old, new, 1) }
	for _, c := range []struct {
		name, out, says string
	}{
		{"empty", "", `ended before "exists -"`},
		{"cut before the end", without("exists -\n"), `ended before "exists -"`},
		{"cut mid-line", pair[:strings.Index(pair, "peer-disk:")], `ended before "exists -"`},
		{"a change line", replace("exists connection", "change connection"), `line 2 "change connection`},
		{"a timestamp", "2024-01-01T00:00:00.000000+00:00 " + pair, `line 1 "2024-01-01T`},
		{"after the end", pair + "exists resource name:rt-x role:Primary\n", "after the end of the initial state"},
		{"fields on the end", replace("exists -", "exists - now"), "the end of the initial state carries fields"},
		{"unknown object", replace("exists path", "exists helper"), `unknown object "helper"`},
		{"no role", replace(" role:Primary", ""), "line 1 "},
		{"a coloured state", replace("disk:UpToDate", "disk:\x1b[1;32mUpToDate\x1b[0m"), "no state DRBD 9 names"},
		{"unknown connection state", replace("connection:Connected", "connection:WFConnection"), `connection:"WFConnection"`},
		{"no key", replace("suspended:no", "suspended"), `"suspended" is no key:value field`},
		{"a key twice", replace("role:Primary", "role:Primary role:Secondary"), `field "role" twice`},
		{"another resource", replace("exists device name:rt-x", "exists device name:rt-y"), `resource "rt-y" among lines of "rt-x"`},
		{"no name", replace("exists device name:rt-x", "exists device"), "line 3 "},
		{"peer-node-id out of range", replace("peer-node-id:1 conn-name:nodeb connection", "peer-node-id:32 conn-name:nodeb connection"), "beyond DRBD's 0..31"},
		{"peer-node-id no number", replace("peer-node-id:1 conn-name:nodeb connection", "peer-node-id:x conn-name:nodeb connection"), `peer-node-id:"x" is no number`},
		{"minor no number", replace("minor:1000", "minor:-1"), `minor:"-1" is no number`},
		{"out-of-sync overflow", replace("out-of-sync:0", "out-of-sync:99999999999999999999"), "out-of-sync"},
		{"quorum neither", replace("quorum:yes", "quorum:maybe"), "neither yes nor no"},
		{"a peer device without its connection", without(strings.SplitAfter(pair, "\n")[1]), "has no connection line"},
		{"conn-name disagrees", replace("conn-name:nodeb volume:0", "conn-name:nodez volume:0"), `conn-name "nodez"`},
		{"a second connection", replace("exists device", strings.SplitAfter(pair, "\n")[1]+"exists device"), "a second connection"},
		{"a second resource line", pair[:strings.Index(pair, "\n")+1] + pair, "a second resource line"},
		{"volume twice", replace("exists peer-device", strings.SplitAfter(pair, "\n")[2]+"exists peer-device"), "volume 0 twice"},
		{"objects without their resource", without(strings.SplitAfter(pair, "\n")[0]), "not the resource"},
	} {
		t.Run(c.name, func(t *testing.T) {
			live, err := parseEvents2([]byte(c.out))
			if err == nil {
				t.Fatalf("accepted %+v", live)
			}
			if errors.Is(err, errNoResourceEvents) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("error %q does not say %q", err, c.says)
			}
		})
	}
}

func TestParseShow9(t *testing.T) {
	for _, c := range []struct {
		file   string
		nodeID uint8
		local  string
		disk   string
		peers  []livePeer
		remote []string
	}{
		{"pair.txt", 0, "ipv4 10.99.0.1:7000", "/dev/zvol/tank/rt-x", []livePeer{{1, "nodeb"}}, []string{"ipv4 10.99.0.2:7000"}},
		{"three-nodes.txt", 1, "ipv4 10.99.0.2:7000", "/dev/zvol/tank/rt-x",
			[]livePeer{{0, "nodea"}, {2, "witness"}}, []string{"ipv4 10.99.0.1:7000", "ipv4 10.99.0.3:7000"}},
		{"diskless.txt", 2, "ipv6 [fd00::3]:7000", "", []livePeer{{0, "nodea"}}, []string{"ipv6 [fd00::1]:7000"}},
		// No path: no address of this node, a peer at the zero address.
		{"pathless.txt", 0, "ipv4 :0", "/dev/zvol/tank/rt-x", []livePeer{{1, "nodeb"}}, []string{"ipv4 :0"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			live, err := parseShow9(sample(t, "show9", c.file))
			if err != nil {
				t.Fatal(err)
			}
			var remote []string
			for _, a := range live.peerAddresses {
				remote = append(remote, a.String())
			}
			if live.name != "rt-x" || live.minor != 1000 || live.nodeID != c.nodeID || live.local.String() != c.local ||
				live.disk != c.disk || !slices.Equal(live.peers, c.peers) || strings.Join(remote, ",") != strings.Join(c.remote, ",") {
				t.Fatalf("parseShow9 = %+v", live)
			}
		})
	}
}

func TestParseShow9RefusesWhatBatonNeverRuns(t *testing.T) {
	pair := sample(t, "show9", "pair.txt")
	replace := func(old, new string) string { return strings.Replace(pair, old, new, 1) }
	for _, c := range []struct{ name, text, says string }{
		{"no resource", "", "printed no resource"},
		{"a resource without a name", replace(`resource "rt-x"`, `resource ""`), "no name baton gives"},
		{"no node-id", replace("node-id\t\t\t0;", ""), "has no node-id"},
		{"node-id out of range", replace("node-id\t\t\t0;", "node-id 32;"), `node-id "32"`},
		{"no peer node-id", replace("_peer_node_id 1;", ""), "has no _peer_node_id"},
		{"no volume", replace("volume 0 {", "vol 0 {"), "has no volume"},
		{"no minor", replace("minor 1000", "1000"), "has no minor"},
		{"two paths", replace("_cstate", "path { _this_host ipv4 10.99.1.1:7000; _remote_host ipv4 10.99.1.2:7000; }\n_cstate"), "2 paths"},
		{"a path without its remote end", replace("_remote_host ipv4 10.99.0.2:7000;", ""), "without _remote_host"},
		{"a path to a name", replace("_remote_host ipv4 10.99.0.2:7000;", "_remote_host ipv4 nodeb:7000;"), "not an IP address"},
		{"unbalanced", strings.TrimSuffix(strings.TrimSpace(pair), "}"), "not closed"},
		{"paths from two addresses", strings.Replace(sample(t, "show9", "three-nodes.txt"),
			"_this_host ipv4 10.99.0.2:7000;\n            _remote_host ipv4 10.99.0.3", "_this_host ipv4 10.99.9.2:7000;\n            _remote_host ipv4 10.99.0.3", 1),
			"one address per node"},
	} {
		t.Run(c.name, func(t *testing.T) {
			live, err := parseShow9(c.text)
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("parseShow9 = %+v, %v; want an error saying %q", live, err, c.says)
			}
		})
	}
}

func FuzzParseEvents2(f *testing.F) {
	for _, text := range samples(f, "events2") {
		f.Add([]byte(text))
	}
	f.Add([]byte("exists resource name:r role:Primary\nexists peer-device name:r peer-node-id:3 conn-name:c volume:0 replication:Off peer-disk:DUnknown\nexists -\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		live, err := parseEvents2(out)
		if err != nil {
			return
		}
		if !safeName.MatchString(live.name) || !events2Roles[live.role] || len(live.connections) > maxConnections {
			t.Fatalf("accepted %+v", live)
		}
		if live.disk != "" && !events2DiskStates[live.disk] {
			t.Fatalf("accepted disk %q", live.disk)
		}
		ids := map[uint8]bool{}
		for _, c := range live.connections {
			if !c.hasNodeID || c.peerNodeID > maxNodeID9 || ids[c.peerNodeID] || !events2ConnStates[c.connection] ||
				(c.replication != "" && !events2ReplStates[c.replication]) {
				t.Fatalf("accepted connection %+v", c)
			}
			ids[c.peerNodeID] = true
		}
		if s := resourceStatus(live, nil, V9); len(s.Peers) != len(live.connections) {
			t.Fatalf("%d connections became %d peers", len(live.connections), len(s.Peers))
		}
	})
}

func FuzzParseShow9(f *testing.F) {
	for _, text := range samples(f, "show9") {
		f.Add(text)
	}
	f.Add(`resource "r" { _this_host { node-id 0; volume 0 { device minor 4294967296; } } }`)
	f.Fuzz(func(t *testing.T, text string) {
		live, err := parseShow9(text)
		if err != nil {
			return
		}
		if !safeName.MatchString(live.name) || live.nodeID > maxNodeID9 || len(live.peers) != len(live.peerAddresses) || len(live.peers) > maxConnections {
			t.Fatalf("accepted %+v", live)
		}
		for _, p := range live.peers {
			if p.nodeID > maxNodeID9 {
				t.Fatalf("accepted peer %+v", p)
			}
		}
	})
}
