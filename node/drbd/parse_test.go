package drbd

import (
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/storage/backend"
)

// Outputs of drbdsetup-84 (drbd-utils 9.22, DRBD 8.4.11) in the vmtest guests.
const (
	statusConnected = `rt-x role:Primary suspended:no
    write-ordering:flush
  volume:0 minor:1000 disk:UpToDate
      size:32764 read:8 written:16 al-writes:1 bm-writes:0 upper-pending:0 lower-pending:0 al-suspended:no blocked:no
  peer connection:Connected role:Secondary congested:no
    volume:0 replication:Established peer-disk:UpToDate resync-suspended:no
        received:0 sent:16 out-of-sync:0 pending:0 unacked:0
`
	statusCutOff = `rt-x role:Primary suspended:no
    write-ordering:flush
  volume:0 minor:1000 disk:UpToDate
      size:32764 read:8 written:28 al-writes:2 bm-writes:0 upper-pending:0 lower-pending:0 al-suspended:no blocked:no
  peer connection:Connecting role:Unknown congested:no
    volume:0 replication:WFConnection peer-disk:DUnknown resync-suspended:no
        received:0 sent:16 out-of-sync:12 pending:0 unacked:0
`
	showPair = `resource rt-x {
    options {
    }
    net {
        protocol                C;
        after-sb-0pri           disconnect;
    }
    _remote_host {
        address                 ipv4 10.99.0.2:7000;
    }
    _this_host {
        address                 ipv4 10.99.0.1:7000;
        volume 0 {
            device              minor 1000;
            disk                "/dev/zvol/tank/rt-x";
            meta-disk           internal;
            disk {
                fencing                 resource-only;
            }
        }
    }
}
`
	dumpPair = `# resource rt-x on nodea: not ignored, not stacked
# defined at /etc/drbd.d/rt-x.res:2
resource rt-x {
    on nodea {
        device           minor 1000;
        disk             /dev/zvol/tank/rt-x;
        meta-disk        internal;
        address          ipv4 10.99.0.1:7000;
    }
    on nodeb {
        device           minor 1000;
        disk             /dev/zvol/tank/rt-x;
        meta-disk        internal;
        address          ipv4 10.99.0.2:7000;
    }
    net {
        protocol           C;
    }
}
`
)

var pairPeers = []backend.ResourceNode{{Node: "nodeb", NodeID: 1, Address: "10.99.0.2:7000", Volume: "rt-x"}}

func TestStatusOfAConnectedPair(t *testing.T) {
	live, err := parseStatus([]byte(statusConnected))
	if err != nil {
		t.Fatal(err)
	}
	got := resourceStatus(live, pairPeers, V84)
	want := backend.ResourceStatus{Name: "rt-x", Role: backend.Primary, Disk: backend.UpToDate, Quorum: true,
		Peers: []backend.PeerStatus{{Node: "nodeb", Connection: backend.Connected, Role: backend.Secondary, Disk: backend.UpToDate}}}
	if !equalStatus(got, want) {
		t.Fatalf("status = %+v, want %+v", got, want)
	}
}

// A peer that is not Connected is Secondary and Outdated whatever DRBD
// says (Unknown, DUnknown), and its out-of-sync KiB count in bytes.
func TestStatusOfALostPeer(t *testing.T) {
	live, err := parseStatus([]byte(statusCutOff))
	if err != nil {
		t.Fatal(err)
	}
	got := resourceStatus(live, pairPeers, V84)
	want := backend.PeerStatus{Node: "nodeb", Connection: backend.Connecting, Role: backend.Secondary, Disk: backend.Outdated, OutOfSyncBytes: 12 << 10}
	if len(got.Peers) != 1 || got.Peers[0] != want {
		t.Fatalf("peers = %+v, want %+v", got.Peers, want)
	}
}

func TestStatusListsConfiguredPeersDRBDDoesNotShow(t *testing.T) {
	live, err := parseStatus([]byte("rt-x role:Secondary suspended:no\n  volume:0 minor:1000 disk:Outdated\n"))
	if err != nil {
		t.Fatal(err)
	}
	peers := []backend.ResourceNode{{Node: "nodeb", Volume: "rt-x"}, {Node: "diskless"}}
	got := resourceStatus(live, peers, V84)
	if got.Disk != backend.Outdated || len(got.Peers) != 2 ||
		got.Peers[0] != (backend.PeerStatus{Node: "diskless", Connection: backend.StandAlone, Disk: backend.Diskless}) ||
		got.Peers[1] != (backend.PeerStatus{Node: "nodeb", Connection: backend.StandAlone, Disk: backend.Outdated}) {
		t.Fatalf("status = %+v", got)
	}
}

func TestConnectionStates(t *testing.T) {
	for _, c := range []struct {
		connection, replication string
		want                    backend.ConnectionState
	}{
		{"Connected", "Established", backend.Connected},
		{"SyncSource", "SyncSource", backend.Connected},
		{"Connected", "PausedSyncT", backend.Connected},
		// 8.4's WFReportParams prints as "Connected" but replicates nothing yet.
		{"Connected", "Off", backend.Connecting},
		{"Connecting", "WFConnection", backend.Connecting},
		{"NetworkFailure", "NetworkFailure", backend.Connecting},
		{"StandAlone", "StandAlone", backend.StandAlone},
	} {
		if got := connectionState(liveConnection{connection: c.connection, replication: c.replication}); got != c.want {
			t.Errorf("connection:%s replication:%s = %v, want %v", c.connection, c.replication, got, c.want)
		}
	}
}

func TestParseShow84(t *testing.T) {
	live, err := parseShow84(showPair)
	if err != nil {
		t.Fatal(err)
	}
	if live.name != "rt-x" || live.minor != 1000 || live.local.String() != "ipv4 10.99.0.1:7000" ||
		live.disk != "/dev/zvol/tank/rt-x" || len(live.peerAddresses) != 1 || live.peerAddresses[0].port != 7000 {
		t.Fatalf("parseShow84 = %+v", live)
	}
}

func TestParseDump(t *testing.T) {
	nodes, err := parseDump(dumpPair)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[1] != (backend.ResourceNode{Node: "nodeb", NodeID: 1, Address: "10.99.0.2:7000", Volume: "rt-x"}) {
		t.Fatalf("parseDump = %+v", nodes)
	}
}

// The resource file baton writes reads back, through the same parser, as the
// configuration it was written from.
func TestRenderedResourceReadsBack(t *testing.T) {
	config := backend.ResourceConfig{Name: "pvc-1", Minor: 7, Port: 7788, Nodes: []backend.ResourceNode{
		{Node: "a", NodeID: 0, Address: "10.0.0.1:7788", Volume: "pvc-1"},
		{Node: "b", NodeID: 1, Address: "[fd00::2]:7788"},
	}}
	text := renderResource84(config, func(v string) string { return "/dev/zvol/tank/" + v })
	for _, want := range []string{"protocol C;", "fencing resource-only;", "after-sb-1pri disconnect;", "meta-disk internal;",
		"disk none;", "address ipv6 [fd00::2]:7788;", "device minor 7;"} {
		if !strings.Contains(text, want) {
			t.Errorf("the resource file lacks %q:\n%s", want, text)
		}
	}
	nodes, err := parseDump(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0] != config.Nodes[0] || nodes[1].Address != "[fd00::2]:7788" || nodes[1].Volume != "" {
		t.Fatalf("read back %+v, want %+v", nodes, config.Nodes)
	}
}

func TestParseProcVersion(t *testing.T) {
	for text, want := range map[string]Version{
		"version: 8.4.11 (api:1/proto:86-101)\nsrcversion: 2A4C1A3A5D9C1A2E3\n": V84,
		"version: 9.2.4 (api:2/proto:86-122)\n":                                 V9,
	} {
		if got, err := parseProcVersion([]byte(text)); err != nil || got != want {
			t.Errorf("parseProcVersion(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, text := range []string{"", "version: 8.3.13\n", "drbd\n"} {
		if _, err := parseProcVersion([]byte(text)); err == nil {
			t.Errorf("parseProcVersion(%q) succeeded", text)
		}
	}
}

func TestParseConfRefusesBrokenText(t *testing.T) {
	for _, text := range []string{"resource r {", "resource r { x }", "}", `disk "unterminated;`, "a b",
		strings.Repeat("a {", 20) + strings.Repeat("}", 20)} {
		if _, err := parseConf(text); err == nil {
			t.Errorf("parseConf(%q) succeeded", text)
		}
	}
	stanzas, err := parseConf(`a "q{;}\"" { b; } # c {`)
	if err != nil || len(stanzas) != 1 || stanzas[0].words[1] != `q{;}"` || len(stanzas[0].block) != 1 {
		t.Fatalf("parseConf of quoted punctuation = %+v, %v", stanzas, err)
	}
}

func equalStatus(a, b backend.ResourceStatus) bool {
	return a.Name == b.Name && a.Role == b.Role && a.Disk == b.Disk && a.Quorum == b.Quorum && slices.Equal(a.Peers, b.Peers)
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte(statusConnected))
	f.Add([]byte(statusCutOff))
	f.Add([]byte("r role:Secondary\n  peer peer peer out-of-sync:99999999999999999999\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		live, err := parseStatus(out)
		if err != nil {
			return
		}
		if live.name == "" || live.role == "" || len(live.connections) > maxConnections {
			t.Fatalf("accepted %+v", live)
		}
		s := resourceStatus(live, nil, V9)
		if len(s.Peers) != len(live.connections) {
			t.Fatalf("%d connections became %d peers", len(live.connections), len(s.Peers))
		}
	})
}

func FuzzParseShow84(f *testing.F) {
	f.Add(showPair)
	f.Add("resource r { _this_host { volume 0 { device minor 4294967296; } } }")
	f.Fuzz(func(t *testing.T, text string) {
		live, err := parseShow84(text)
		if err == nil && live.name == "" {
			t.Fatalf("accepted a resource without a name: %+v", live)
		}
	})
}

func FuzzParseDump(f *testing.F) {
	f.Add(dumpPair)
	f.Add("resource r { on a { address ipv6 [::1]:1; node-id 300; } }")
	f.Add(sample(f, "dump9", "three-nodes.txt"))
	f.Fuzz(func(t *testing.T, text string) {
		nodes, err := parseDump(text)
		if err == nil && len(nodes) > maxConnections {
			t.Fatalf("accepted %d nodes", len(nodes))
		}
	})
}

func FuzzParseProcVersion(f *testing.F) {
	f.Add([]byte("version: 8.4.11 (api:1/proto:86-101)\n"))
	f.Add([]byte("version: \n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		v, err := parseProcVersion(text)
		if err == nil && v != V84 && v != V9 {
			t.Fatalf("parsed version %v", v)
		}
	})
}
