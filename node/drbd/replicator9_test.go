package drbd

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec/exectest"
	"github.com/baton-dr/baton/storage/backend"
)

// These tests drive the Replicator on DRBD 9 through a test double of the
// tools (exectest.FakeCmder): no DRBD 9 module runs where baton is tested.
// The replies are the samples under testdata, in the formats of drbd-utils 9.

// procDRBD9 stands for /proc/drbd of a DRBD 9 module: only its first line,
// the version parseProcVersion reads, is taken from anywhere (the form of
// 8.4's, which the vmtest guests print, with a 9 version).
const procDRBD9 = "version: 9.2.8 (api:2/proto:86-122)\n"

func fakeReplicator9(t *testing.T, replies map[string]exectest.Reply) (*Replicator, *exectest.FakeCmder) {
	t.Helper()
	r, fake := fakeReplicatorOn(t, procDRBD9, replies)
	if r.Version() != V9 {
		t.Fatalf("version %v, want 9", r.Version())
	}
	return r, fake
}

// pairConfig on DRBD 9: nodea (node-id 0) and nodeb (node-id 1).
func TestUpOnDRBD9WritesTheDRBD9File(t *testing.T) {
	r, fake := fakeReplicator9(t, map[string]exectest.Reply{
		"drbdsetup show rt-x": {}, // DRBD 9's show prints nothing for a resource it does not run
		conf + "up rt-x":      {},
	})
	if err := r.Up(pairConfig); err != nil {
		t.Fatal(err)
	}
	file := string(fake.Stdin("tee /var/lib/baton/drbd/rt-x.conf.tmp"))
	if file != renderResource9(pairConfig, zvol) {
		t.Fatalf("Up wrote\n%s", file)
	}
	if len(ran(fake, conf+"up rt-x")) != 1 {
		t.Fatalf("ran %q", fake.Calls())
	}
}

func TestUpOnDRBD9RefusesBrokenNodeIDsBeforeWritingAFile(t *testing.T) {
	r, fake := fakeReplicator9(t, nil)
	twice := pairConfig
	twice.Nodes = []backend.ResourceNode{pairConfig.Nodes[0], pairConfig.Nodes[1]}
	twice.Nodes[1].NodeID = 0
	if err := r.Up(twice); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("Up with node-id 0 twice: %v, want ErrInvalid", err)
	}
	if calls := fake.Calls(); len(calls) != 1 {
		t.Fatalf("ran %q; only /proc/drbd was to be read", calls)
	}
}

// A running DRBD 9 resource takes Up with its own configuration as done,
// and refuses another node-id or another peer: the kernel keeps both.
func TestUpOnARunningDRBD9Resource(t *testing.T) {
	r, fake := fakeReplicator9(t, map[string]exectest.Reply{"drbdsetup show rt-x": {Stdout: sample(t, "show9", "pair.txt")}})
	if err := r.Up(pairConfig); err != nil {
		t.Fatalf("Up with the running configuration: %v", err)
	}
	renumbered := pairConfig
	renumbered.Nodes = []backend.ResourceNode{pairConfig.Nodes[0], pairConfig.Nodes[1]}
	renumbered.Nodes[1].NodeID = 2
	self := pairConfig
	self.Nodes = []backend.ResourceNode{pairConfig.Nodes[0], pairConfig.Nodes[1]}
	self.Nodes[0].NodeID = 3
	moved := pairConfig
	moved.Nodes = []backend.ResourceNode{pairConfig.Nodes[0], pairConfig.Nodes[1]}
	moved.Nodes[1].Address = "10.99.0.9:7000"
	for name, config := range map[string]backend.ResourceConfig{"the peer renumbered": renumbered, "this node renumbered": self, "the peer moved": moved} {
		if err := r.Up(config); !errors.Is(err, backend.ErrRefused) {
			t.Errorf("Up with %s: %v, want ErrRefused", name, err)
		}
	}
	for _, line := range fake.Calls() {
		if !strings.HasPrefix(line, "cat /proc/drbd") && !strings.HasPrefix(line, "drbdsetup show") {
			t.Errorf("Up on a running resource ran %q", line)
		}
	}
}

// A connection without a path is no configuration baton asked for: Up
// refuses it rather than take it for the running pair.
func TestUpOnAHalfUpDRBD9ResourceIsRefused(t *testing.T) {
	r, _ := fakeReplicator9(t, map[string]exectest.Reply{"drbdsetup show rt-x": {Stdout: sample(t, "show9", "pathless.txt")}})
	if err := r.Up(pairConfig); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("Up over a pathless connection: %v, want ErrRefused", err)
	}
}

// DRBD 9's drbdsetup changes roles by resource, new-current-uuid by minor.
func TestRoleChangesOnDRBD9NameTheResource(t *testing.T) {
	r, fake := fakeReplicator9(t, map[string]exectest.Reply{
		"drbdsetup show rt-x":                            {Stdout: sample(t, "show9", "pair.txt")},
		"drbdsetup primary rt-x --force":                 {},
		"drbdsetup primary rt-x":                         {Stderr: "rt-x: State change failed: (-2) Need access to UpToDate data\n", ExitCode: 11},
		"drbdsetup secondary rt-x":                       {Stderr: "rt-x: State change failed: (-12) Device is held open by someone\n", ExitCode: 11},
		"drbdsetup new-current-uuid 1000 --clear-bitmap": {},
	})
	checkRoleChanges(t, r, "promotion without good data")
	if lines := ran(fake, "drbdsetup primary 1000"); len(lines) != 0 {
		t.Errorf("ran %q: DRBD 9's primary takes the resource", lines)
	}
}

func TestStatusOnDRBD9ReadsEvents2(t *testing.T) {
	r, fake := fakeReplicator9(t, map[string]exectest.Reply{
		"drbdsetup events2 --now --statistics rt-x": {Stdout: sample(t, "events2", "sync-source.txt")},
		conf + "dump rt-x":                          {Stdout: renderResource9(pairConfig, zvol)},
	})
	s, err := r.Status("rt-x")
	want := backend.PeerStatus{Node: "nodeb", Connection: backend.Connected, Role: backend.Secondary, Disk: backend.Inconsistent, OutOfSyncBytes: 2500 << 10}
	if err != nil || s.Role != backend.Primary || s.Disk != backend.UpToDate || len(s.Peers) != 1 || s.Peers[0] != want {
		t.Fatalf("Status = %+v, %v (ran %q)", s, err, fake.Calls())
	}
	if len(ran(fake, "drbdsetup status")) != 0 {
		t.Fatal("DRBD 9's status came from drbdsetup status, not events2")
	}
}

func TestStatusOnDRBD9OfAResourceItDoesNotRun(t *testing.T) {
	r, _ := fakeReplicator9(t, map[string]exectest.Reply{
		"drbdsetup events2 --now --statistics rt-x": {Stdout: sample(t, "events2", "no-resource.txt")},
	})
	if _, err := r.Status("rt-x"); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("Status of a resource DRBD does not run: %v, want ErrNotFound", err)
	}
}

// A partial events2 is an error, never a status.
func TestStatusOnDRBD9RefusesAPartialState(t *testing.T) {
	partial := strings.Replace(sample(t, "events2", "connected-pair.txt"), "exists -\n", "", 1)
	r, _ := fakeReplicator9(t, map[string]exectest.Reply{
		"drbdsetup events2 --now --statistics rt-x": {Stdout: partial},
		conf + "dump rt-x":                          {Stdout: renderResource9(pairConfig, zvol)},
	})
	if s, err := r.Status("rt-x"); err == nil || errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("Status of a partial state = %+v, %v; want an error", s, err)
	}
}

// Show reports what the kernel runs: node-ids and peer names from DRBD 9's
// kernel, the peers' volumes from the resource file.
func TestShowOnDRBD9(t *testing.T) {
	r, _ := fakeReplicator9(t, map[string]exectest.Reply{
		"drbdsetup show rt-x": {Stdout: sample(t, "show9", "pair.txt")},
		conf + "dump rt-x":    {Stdout: renderResource9(pairConfig, zvol)},
	})
	got, err := r.Show("rt-x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "rt-x" || got.Minor != 1000 || got.Port != 7000 || len(got.Nodes) != 2 ||
		got.Nodes[0] != pairConfig.Nodes[0] || got.Nodes[1] != pairConfig.Nodes[1] {
		t.Fatalf("Show = %+v, want %+v", got, pairConfig)
	}
}

// Without its resource file, Show still names the peer: DRBD 9's kernel
// knows the connection's name and the peer's node-id.
func TestShowOnDRBD9WithoutTheResourceFile(t *testing.T) {
	r, _ := fakeReplicator9(t, map[string]exectest.Reply{
		"drbdsetup show rt-x": {Stdout: sample(t, "show9", "three-nodes.txt")},
		conf + "dump rt-x":    {Stderr: "drbdadm: Can not open '/var/lib/baton/drbd/rt-x.conf': No such file or directory\n", ExitCode: 10},
	})
	r.options.Node = "nodeb"
	got, err := r.Show("rt-x")
	if err != nil {
		t.Fatal(err)
	}
	want := []backend.ResourceNode{
		{Node: "nodea", NodeID: 0, Address: "10.99.0.1:7000"},
		{Node: "nodeb", NodeID: 1, Address: "10.99.0.2:7000", Volume: "rt-x"},
		{Node: "witness", NodeID: 2, Address: "10.99.0.3:7000"},
	}
	if len(got.Nodes) != 3 || got.Nodes[0] != want[0] || got.Nodes[1] != want[1] || got.Nodes[2] != want[2] || got.Port != 7000 {
		t.Fatalf("Show = %+v, want nodes %+v", got, want)
	}
}

// With no path the kernel holds no address of this node: Show takes the
// port from the resource file rather than report none.
func TestShowOnDRBD9WithoutAPath(t *testing.T) {
	r, _ := fakeReplicator9(t, map[string]exectest.Reply{
		"drbdsetup show rt-x": {Stdout: sample(t, "show9", "pathless.txt")},
		conf + "dump rt-x":    {Stdout: renderResource9(pairConfig, zvol)},
	})
	got, err := r.Show("rt-x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Port != 7000 || got.Nodes[0].Address != "10.99.0.1:7000" || got.Nodes[1] != (backend.ResourceNode{Node: "nodeb", NodeID: 1, Volume: "rt-x"}) {
		t.Fatalf("Show = %+v", got)
	}
}
