package drbd

import (
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec/exectest"
	"github.com/baton-dr/baton/storage/backend"
)

// sharedKernel is node a of two kind nodes on one kernel: its resources carry
// its name, its minors an offset of 100000.
var sharedKernel = SharedKernel{Suffix: "nodea", MinorOffset: 100000}

const confA = "drbdadm -c /var/lib/baton/drbd/rt-x-nodea.conf "

// asKernel is a reply of drbd-utils (parse_test.go's, from the guests) as
// the kernel prints it for node a's own resource: its name and minor.
func asKernel(text string) string {
	text = strings.ReplaceAll(text, "rt-x {", "rt-x-nodea {")
	text = strings.ReplaceAll(text, "rt-x role:", "rt-x-nodea role:")
	return strings.ReplaceAll(text, "minor 1000;", "minor 101000;")
}

// sharedReplicator is a Replicator with SharedKernel over a test double of
// drbd-utils (exectest.FakeCmder).
func sharedReplicator(t *testing.T, shared SharedKernel, replies map[string]exectest.Reply) (*Replicator, *exectest.FakeCmder) {
	t.Helper()
	fake := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"cat /proc/drbd": {Stdout: procDRBD}, "mkdir -p ": {}, "tee ": {}, "mv ": {},
	}}
	for line, reply := range replies {
		fake.Replies[line] = reply
	}
	r, err := New(Options{Cmder: fake, Node: "nodea", Backing: func(v string) string { return "/dev/zvol/tank/" + v },
		SharedKernel: shared})
	if err != nil {
		t.Fatal(err)
	}
	return r, fake
}

// noOtherName fails if a command named the core's bare resource or the
// other node's: a node on a shared kernel touches its own resources only.
func noOtherName(t *testing.T, fake *exectest.FakeCmder) {
	t.Helper()
	for _, line := range fake.Calls() {
		for _, word := range strings.Fields(line) {
			if word == "rt-x" || strings.Contains(word, "rt-x-nodeb") || strings.HasSuffix(word, "/rt-x.conf") {
				t.Errorf("%q names another node's resource", line)
			}
		}
	}
}

func TestSharedKernelUpNamesTheNodesOwnResourceAndMinor(t *testing.T) {
	r, fake := sharedReplicator(t, sharedKernel, map[string]exectest.Reply{
		"drbdsetup show rt-x-nodea": {Stderr: showMissing, ExitCode: 20},
		confA + "up rt-x-nodea":     {},
	})
	if err := r.Up(pairConfig); err != nil {
		t.Fatal(err)
	}
	file := string(fake.Stdin("tee /var/lib/baton/drbd/rt-x-nodea.conf.tmp"))
	if !strings.Contains(file, "resource rt-x-nodea {") || strings.Count(file, "device minor 101000;") != 2 || strings.Contains(file, "minor 1000;") {
		t.Errorf("resource file:\n%s", file)
	}
	// The peers' addresses and the volume are the core's: only names and
	// minors are the kernel's.
	if !strings.Contains(file, "address ipv4 10.99.0.2:7000;") || !strings.Contains(file, "disk /dev/zvol/tank/rt-x;") {
		t.Errorf("resource file:\n%s", file)
	}
	if got := ran(fake, "drbdadm"); len(got) != 1 || got[0] != confA+"up rt-x-nodea" {
		t.Errorf("drbdadm ran %q", got)
	}
	noOtherName(t, fake)
}

func TestSharedKernelUpOfARunningResourceComparesTheKernelsMinor(t *testing.T) {
	r, fake := sharedReplicator(t, sharedKernel, map[string]exectest.Reply{
		"drbdsetup show rt-x-nodea": {Stdout: asKernel(showPair)},
	})
	if err := r.Up(pairConfig); err != nil {
		t.Fatalf("Up of the running resource: %v", err)
	}
	if got := ran(fake, "drbdadm"); len(got) != 0 {
		t.Errorf("Up of a running resource ran %q", got)
	}
	// The core's minor as it stands, without the offset, is another minor.
	other, _ := sharedReplicator(t, sharedKernel, map[string]exectest.Reply{"drbdsetup show rt-x-nodea": {Stdout: showPair}})
	if err := other.Up(pairConfig); !errors.Is(err, backend.ErrRefused) {
		t.Errorf("Up over minor 1000 where 101000 is asked: %v, want ErrRefused", err)
	}
}

func TestSharedKernelShowAndStatusSpeakTheCoresNames(t *testing.T) {
	r, fake := sharedReplicator(t, sharedKernel, map[string]exectest.Reply{
		"drbdsetup show rt-x-nodea": {Stdout: asKernel(showPair)},
		confA + "dump rt-x-nodea":   {Stdout: asKernel(dumpPair)},
		"drbdsetup status rt-x-nodea --verbose --statistics --color=never": {Stdout: asKernel(statusConnected)},
	})
	config, err := r.Show("rt-x")
	if err != nil {
		t.Fatal(err)
	}
	if config.Name != "rt-x" || config.Minor != 1000 || config.Port != 7000 || len(config.Nodes) != 2 || config.Nodes[1].Node != "nodeb" {
		t.Errorf("Show = %+v, want rt-x, minor 1000, port 7000, nodea and nodeb", config)
	}
	status, err := r.Status("rt-x")
	if err != nil {
		t.Fatal(err)
	}
	if status.Name != "rt-x" || status.Role != backend.Primary || len(status.Peers) != 1 || status.Peers[0].Node != "nodeb" ||
		status.Peers[0].Connection != backend.Connected {
		t.Errorf("Status = %+v", status)
	}
	noOtherName(t, fake)
}

func TestSharedKernelRolesUseTheKernelsMinor(t *testing.T) {
	r, fake := sharedReplicator(t, sharedKernel, map[string]exectest.Reply{
		"drbdsetup show rt-x-nodea":                        {Stdout: asKernel(showPair)},
		"drbdsetup primary 101000":                         {},
		"drbdsetup new-current-uuid 101000 --clear-bitmap": {},
		"drbdsetup down rt-x-nodea":                        {},
	})
	must := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must(r.Primary("rt-x", false), "Primary")
	must(r.NewCurrentUUID("rt-x", true), "NewCurrentUUID")
	must(r.Down("rt-x"), "Down")
	if got := ran(fake, "drbdsetup down"); len(got) != 1 || got[0] != "drbdsetup down rt-x-nodea" {
		t.Errorf("Down ran %q", got)
	}
	noOtherName(t, fake)
}

// Another node's resource on the kernel is none of this node's business:
// this node's resource of the same core name is down, whatever the other's.
func TestSharedKernelIgnoresTheOtherNodesResource(t *testing.T) {
	r, fake := sharedReplicator(t, sharedKernel, map[string]exectest.Reply{
		"drbdsetup show rt-x-nodea":  {Stderr: showMissing, ExitCode: 20},
		"drbdsetup show rt-x-nodeb":  {Stdout: strings.ReplaceAll(showPair, "rt-x {", "rt-x-nodeb {")},
		"drbdsetup show rt-x":        {Stdout: showPair},
		confA + "dump-md rt-x-nodea": {Stderr: noMetadataWords, ExitCode: 1},
	})
	if _, err := r.Show("rt-x"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("Show while only other nodes run rt-x: %v, want ErrNotFound", err)
	}
	if err := r.Down("rt-x"); err != nil {
		t.Errorf("Down: %v", err)
	}
	has, err := r.HasMetadata(pairConfig)
	if err != nil || has {
		t.Errorf("HasMetadata = %v, %v; want false: the other node's resource is not this node's metadata", has, err)
	}
	noOtherName(t, fake)
}

func TestSharedKernelRefusesWhatDRBDWouldNot(t *testing.T) {
	for _, c := range []struct {
		name   string
		shared SharedKernel
	}{
		{"offset without a suffix", SharedKernel{MinorOffset: 10}},
		{"suffix with a colon", SharedKernel{Suffix: "a:b"}},
		{"suffix with a space", SharedKernel{Suffix: "a b"}},
		{"suffix starting with a dash", SharedKernel{Suffix: "-a"}},
		{"suffix of 64 characters", SharedKernel{Suffix: strings.Repeat("n", 64)}},
		{"offset past the last minor", SharedKernel{Suffix: "a", MinorOffset: 1 << 20}},
	} {
		_, err := New(Options{Cmder: &exectest.FakeCmder{}, Node: "nodea", Backing: func(v string) string { return v }, SharedKernel: c.shared})
		if err == nil || !strings.Contains(err.Error(), "drbd: ") {
			t.Errorf("%s: New = %v, want a refusal", c.name, err)
		}
	}

	r, fake := sharedReplicator(t, SharedKernel{Suffix: strings.Repeat("n", 63), MinorOffset: 1<<20 - 1000}, nil)
	long := pairConfig
	long.Name = strings.Repeat("r", 64) // 64 + 1 + 63 = 128 characters
	if err := r.Up(long); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "at most 127") {
		t.Errorf("Up of a name too long for the kernel: %v", err)
	}
	if err := r.Up(pairConfig); !errors.Is(err, backend.ErrInvalid) || !strings.Contains(err.Error(), "last minor") {
		t.Errorf("Up of minor 1000 past the kernel's last minor: %v", err)
	}
	if calls := fake.Calls(); len(calls) != 1 { // cat /proc/drbd
		t.Errorf("refused configurations ran %q", calls)
	}
}

func TestSharedKernelShowRefusesAMinorBelowTheOffset(t *testing.T) {
	r, _ := sharedReplicator(t, sharedKernel, map[string]exectest.Reply{
		"drbdsetup show rt-x-nodea": {Stdout: strings.ReplaceAll(showPair, "rt-x {", "rt-x-nodea {")},
		confA + "dump rt-x-nodea":   {Stdout: asKernel(dumpPair)},
	})
	if _, err := r.Show("rt-x"); err == nil || !strings.Contains(err.Error(), "below this node's offset") {
		t.Errorf("Show of minor 1000 under offset 100000: %v", err)
	}
}

// On DRBD 9 (test double, testdata's samples with node a's kernel names):
// events2 and show name the kernel's resource, the answers the core's.
func TestSharedKernelOnDRBD9(t *testing.T) {
	fake := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"cat /proc/drbd": {Stdout: procDRBD9},
		"drbdsetup events2 --now --statistics rt-x-nodea": {
			Stdout: strings.ReplaceAll(sample(t, "events2", "connected-pair.txt"), "name:rt-x ", "name:rt-x-nodea ")},
		"drbdsetup show rt-x-nodea": {Stdout: strings.ReplaceAll(strings.ReplaceAll(sample(t, "show9", "pair.txt"),
			`resource "rt-x"`, `resource "rt-x-nodea"`), "minor 1000;", "minor 101000;")},
		confA + "dump rt-x-nodea":      {Stdout: renderResource9(pairConfig, zvol)},
		"drbdsetup primary rt-x-nodea": {},
	}}
	r, err := New(Options{Cmder: fake, Node: "nodea", Backing: zvol, SharedKernel: sharedKernel})
	if err != nil || r.Version() != V9 {
		t.Fatalf("New: %v, version %v", err, r.Version())
	}
	s, err := r.Status("rt-x")
	if err != nil || s.Name != "rt-x" || s.Role != backend.Primary || len(s.Peers) != 1 || s.Peers[0].Connection != backend.Connected {
		t.Errorf("Status = %+v, %v (ran %q)", s, err, fake.Calls())
	}
	config, err := r.Show("rt-x")
	if err != nil || config.Name != "rt-x" || config.Minor != 1000 {
		t.Errorf("Show = %+v, %v", config, err)
	}
	if err := r.Primary("rt-x", false); err != nil {
		t.Errorf("Primary: %v", err)
	}
	noOtherName(t, fake)
}
