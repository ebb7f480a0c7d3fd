package drbd

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/exec/exectest"
	"github.com/baton-dr/baton/storage/backend"
)

// Replies are what drbd-utils 9.22 with DRBD 8.4.11 printed in the vmtest
// guests.
const (
	procDRBD        = "version: 8.4.11 (api:1/proto:86-101)\nsrcversion: 1295246FDB8FACFB12644BC \n"
	showMissing     = "received netlink error reply: No such device\n"
	noMetadataWords = "No valid meta data found\n"
	uncleanMD       = "Found meta data is \"unclean\", please apply-al first\n"
	createMDOverMD  = "You want me to create a v08 style flexible-size internal meta data block.\n" +
		"There appears to be a v08 flexible-size internal meta data block\n" +
		"already in place on /dev/zvol/tank/rt-x at byte offset 33550336\n\n" +
		"Do you really want to overwrite the existing meta-data?\nstdin not a TTY, not waiting for confirmation\n"
)

var pairConfig = backend.ResourceConfig{Name: "rt-x", Minor: 1000, Port: 7000, Nodes: []backend.ResourceNode{
	{Node: "nodea", NodeID: 0, Address: "10.99.0.1:7000", Volume: "rt-x"},
	{Node: "nodeb", NodeID: 1, Address: "10.99.0.2:7000", Volume: "rt-x"},
}}

const conf = "drbdadm -c /var/lib/baton/drbd/rt-x.conf "

func fakeReplicator(t *testing.T, replies map[string]exectest.Reply) (*Replicator, *exectest.FakeCmder) {
	t.Helper()
	return fakeReplicatorOn(t, procDRBD, replies)
}

// fakeReplicatorOn is a Replicator for nodea whose module's /proc/drbd reads
// proc, its file commands succeeding and replies answering the rest.
func fakeReplicatorOn(t *testing.T, proc string, replies map[string]exectest.Reply) (*Replicator, *exectest.FakeCmder) {
	t.Helper()
	fake := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"cat /proc/drbd": {Stdout: proc},
		"mkdir -p ":      {},
		"tee ":           {},
		"mv ":            {},
	}}
	for line, reply := range replies {
		fake.Replies[line] = reply
	}
	r, err := New(Options{Cmder: fake, Node: "nodea", Backing: zvol})
	if err != nil {
		t.Fatal(err)
	}
	return r, fake
}

func ran(fake *exectest.FakeCmder, prefix string) []string {
	var lines []string
	for _, line := range fake.Calls() {
		if strings.HasPrefix(line, prefix) {
			lines = append(lines, line)
		}
	}
	return lines
}

func TestHasMetadataReadsDrbdmetasVerdict(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply exectest.Reply
		want  bool
	}{
		{"none", exectest.Reply{Stderr: noMetadataWords, ExitCode: 1}, false},
		{"clean", exectest.Reply{Stdout: "version \"v08\";\n"}, true},
		{"unclean after a primary went down", exectest.Reply{Stderr: uncleanMD, ExitCode: 1}, true},
	} {
		r, _ := fakeReplicator(t, map[string]exectest.Reply{
			"drbdsetup show rt-x": {Stderr: showMissing, ExitCode: 20},
			conf + "dump-md rt-x": c.reply,
		})
		has, err := r.HasMetadata(pairConfig)
		if err != nil || has != c.want {
			t.Errorf("%s: HasMetadata = %v, %v; want %v", c.name, has, err, c.want)
		}
	}
}

func TestCreateMetadataOverMetadataIsRefusedInDrbdmetasWords(t *testing.T) {
	r, fake := fakeReplicator(t, map[string]exectest.Reply{
		"drbdsetup show rt-x":   {Stderr: showMissing, ExitCode: 20},
		conf + "create-md rt-x": {Stdout: "Operation cancelled.\n", Stderr: createMDOverMD, ExitCode: 1},
	})
	err := r.CreateMetadata(pairConfig)
	var toolErr *backend.ToolError
	if !errors.Is(err, backend.ErrRefused) || !errors.As(err, &toolErr) || !strings.Contains(toolErr.Message, "overwrite the existing meta-data") {
		t.Fatalf("create-md over metadata: %v, want ErrRefused in drbdmeta's words", err)
	}
	if strings.Count(string(fake.Stdin(conf+"create-md rt-x")), "no\n") == 0 {
		t.Fatal("create-md was not told no")
	}
}

// A running resource is never touched by Up: the same configuration is
// success without a command that changes anything, another one a refusal.
func TestUpOnARunningResourceChangesNothing(t *testing.T) {
	r, fake := fakeReplicator(t, map[string]exectest.Reply{"drbdsetup show rt-x": {Stdout: showPair}})
	if err := r.Up(pairConfig); err != nil {
		t.Fatalf("Up with the running configuration: %v", err)
	}
	moved := pairConfig
	moved.Minor = 1001
	if err := r.Up(moved); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("Up with another minor: %v, want ErrRefused", err)
	}
	if err := r.CreateMetadata(pairConfig); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("CreateMetadata on a running resource: %v, want ErrRefused", err)
	}
	for _, line := range fake.Calls() {
		if !strings.HasPrefix(line, "cat /proc/drbd") && !strings.HasPrefix(line, "drbdsetup show") {
			t.Errorf("Up on a running resource ran %q", line)
		}
	}
}

// DRBD detaches a disk that failed a write and keeps the replica Diskless;
// the agent's next Up with the same configuration attaches it again, and
// only then: an attached disk is left alone, another disk is refused.
func TestUpAttachesADetachedDisk(t *testing.T) {
	detached := strings.Replace(showPair, "            disk                \"/dev/zvol/tank/rt-x\";\n", "", 1)
	if detached == showPair {
		t.Fatal("the sample lost its disk line")
	}
	for _, show := range []string{detached, strings.Replace(showPair, `"/dev/zvol/tank/rt-x"`, "none", 1)} {
		r, fake := fakeReplicator(t, map[string]exectest.Reply{
			"drbdsetup show rt-x": {Stdout: show},
			conf + "attach rt-x":  {},
		})
		if err := r.Up(pairConfig); err != nil {
			t.Fatalf("Up with the disk detached: %v", err)
		}
		if len(ran(fake, conf+"attach rt-x")) != 1 || len(ran(fake, "tee ")) != 1 {
			t.Fatalf("Up with the disk detached ran %q, want the resource file written and one attach", fake.Calls())
		}
	}
	r, fake := fakeReplicator(t, map[string]exectest.Reply{"drbdsetup show rt-x": {Stdout: showPair}})
	if err := r.Up(pairConfig); err != nil || len(ran(fake, conf+"attach")) != 0 {
		t.Fatalf("Up with the disk attached: %v, ran %q", err, fake.Calls())
	}
	other := strings.Replace(showPair, "tank/rt-x", "tank/other", 1)
	r, _ = fakeReplicator(t, map[string]exectest.Reply{"drbdsetup show rt-x": {Stdout: other}})
	if err := r.Up(pairConfig); !errors.Is(err, backend.ErrRefused) {
		t.Fatalf("Up with another disk attached: %v, want ErrRefused", err)
	}
}

// An up that fails halfway is taken down again: a diskless leftover must
// not pass for a running resource at the next Up.
func TestAFailedUpLeavesNothingUp(t *testing.T) {
	r, fake := fakeReplicator(t, map[string]exectest.Reply{
		"drbdsetup show rt-x": {Stderr: showMissing, ExitCode: 20},
		conf + "up rt-x":      {Stderr: "1000: Failure: (119) No valid meta-data signature found.\n", ExitCode: 10},
		"drbdsetup down rt-x": {},
	})
	r.options.Cmder = &afterCommand{FakeCmder: fake, line: conf + "up rt-x", then: func() {
		// drbdadm up made the resource before its attach failed.
		fake.Replies["drbdsetup show rt-x"] = exectest.Reply{Stdout: showPair}
	}}
	if err := r.Up(pairConfig); !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("Up without metadata: %v, want ErrNotFound (119)", err)
	}
	if len(ran(fake, "drbdsetup down rt-x")) != 1 {
		t.Fatalf("the half-up resource was not taken down: ran %q", fake.Calls())
	}
}

// afterCommand changes the fake's replies once a command line was made.
type afterCommand struct {
	*exectest.FakeCmder
	line string
	then func()
}

func (a *afterCommand) Command(ctx context.Context, name string, args ...string) exec.Cmd {
	cmd := a.FakeCmder.Command(ctx, name, args...)
	if strings.Join(append([]string{name}, args...), " ") == a.line {
		return &thenCmd{Cmd: cmd, then: a.then}
	}
	return cmd
}

type thenCmd struct {
	exec.Cmd
	then func()
}

func (c *thenCmd) SetStdin(r io.Reader) exec.Cmd  { c.Cmd.SetStdin(r); return c }
func (c *thenCmd) SetStdout(w io.Writer) exec.Cmd { c.Cmd.SetStdout(w); return c }

func (c *thenCmd) Run() error {
	err := c.Cmd.Run()
	c.then()
	return err
}

// checkRoleChanges runs the role changes of rt-x against replies that refuse
// the plain promotion (refused says why) and the demotion of an open device,
// and take the forced promotion and new-current-uuid.
func checkRoleChanges(t *testing.T, r backend.Replicator, refused string) {
	t.Helper()
	if err := r.Primary("rt-x", false); !errors.Is(err, backend.ErrRefused) {
		t.Errorf("%s: %v, want ErrRefused", refused, err)
	}
	if err := r.Primary("rt-x", true); err != nil {
		t.Errorf("a forced promotion: %v", err)
	}
	if err := r.Secondary("rt-x"); !errors.Is(err, backend.ErrBusy) {
		t.Errorf("demoting an open device: %v, want ErrBusy", err)
	}
	if err := r.NewCurrentUUID("rt-x", true); err != nil {
		t.Errorf("new-current-uuid: %v", err)
	}
}

func TestRoleChangesUseTheLiveMinor(t *testing.T) {
	r, fake := fakeReplicator(t, map[string]exectest.Reply{
		"drbdsetup show rt-x":                            {Stdout: showPair},
		"drbdsetup primary 1000 --force":                 {},
		"drbdsetup primary 1000":                         {Stderr: "1000: State change failed: (-1) Multiple primaries not allowed by config\n", ExitCode: 11},
		"drbdsetup secondary 1000":                       {Stderr: "1000: State change failed: (-12) Device is held open by someone\n", ExitCode: 11},
		"drbdsetup new-current-uuid 1000 --clear-bitmap": {},
	})
	checkRoleChanges(t, r, "a second primary")
	if lines := ran(fake, "drbdadm"); len(lines) != 0 {
		t.Errorf("role changes ran %q: they act on the live minor, not the file", lines)
	}
}

func TestDownOfAnUnknownResourceIsDone(t *testing.T) {
	r, fake := fakeReplicator(t, map[string]exectest.Reply{"drbdsetup show rt-x": {Stderr: showMissing, ExitCode: 20}})
	if err := r.Down("rt-x"); err != nil {
		t.Fatal(err)
	}
	if len(ran(fake, "drbdsetup down")) != 0 {
		t.Fatal("Down ran drbdsetup down on a resource DRBD does not know")
	}
	if _, err := r.Status("rt-x"); err == nil {
		t.Fatal("Status of an unknown resource succeeded")
	}
}

func TestStatusNamesThePeerFromTheResourceFile(t *testing.T) {
	r, fake := fakeReplicator(t, map[string]exectest.Reply{
		"drbdsetup status rt-x --verbose --statistics --color=never": {Stdout: statusConnected},
		conf + "dump rt-x": {Stdout: dumpPair},
	})
	s, err := r.Status("rt-x")
	if err != nil || len(s.Peers) != 1 || s.Peers[0].Node != "nodeb" || s.Peers[0].Connection != backend.Connected {
		t.Fatalf("Status = %+v, %v (ran %q)", s, err, fake.Calls())
	}
}
