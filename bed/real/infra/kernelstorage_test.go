package infra

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec/exectest"
)

// statusTwoNodes is `drbdsetup status` in drbd-utils 9.22's layout (each
// resource's name first on an unindented line; node/drbd's parse_test.go
// holds one captured on DRBD 8.4.11), written for the bed's two nodes of
// site A and a resource of the host's own.
const statusTwoNodes = `pvc-1-baton-site-a-worker role:Secondary
  disk:UpToDate
  peer role:Secondary
    replication:Established peer-disk:UpToDate

pvc-1-baton-site-a-worker2 role:Secondary
  disk:UpToDate
  peer role:Secondary
    replication:Established peer-disk:UpToDate

r0 role:Primary
  disk:UpToDate
`

func found(string) (string, error)   { return "/usr/sbin/tool", nil }
func missing(string) (string, error) { return "", errors.New("executable file not found in $PATH") }

// TestTeardownReleasesTheBedsDRBDAndPoolsOnly runs kernelStorage over a
// test double of drbdsetup and zpool (exectest.FakeCmder): this host has
// neither.
func TestTeardownReleasesTheBedsDRBDAndPoolsOnly(t *testing.T) {
	fake := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"drbdsetup status":             {Stdout: statusTwoNodes},
		"drbdsetup down ":              {},
		"zpool list -H -o name":        {Stdout: "baton-site-a-worker\nbaton-site-a-worker2\ntank\n"},
		"zpool export baton-site-a-wo": {},
	}}
	k := newKernelStorage()
	k.cmder, k.lookPath = fake, found
	said, err := k.release()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"drbdsetup status",
		"drbdsetup down pvc-1-baton-site-a-worker", "drbdsetup down pvc-1-baton-site-a-worker2",
		"zpool list -H -o name",
		"zpool export baton-site-a-worker", "zpool export baton-site-a-worker2",
	}
	if got := fake.Calls(); !slices.Equal(got, want) {
		t.Errorf("ran %q\nwant %q", got, want)
	}
	for _, words := range []string{"DRBD resources down: pvc-1-baton-site-a-worker, pvc-1-baton-site-a-worker2",
		"pools exported: baton-site-a-worker, baton-site-a-worker2"} {
		if !strings.Contains(said, words) {
			t.Errorf("said %q, want it to say %q", said, words)
		}
	}
}

func TestTeardownWithoutTheToolsOrTheModulesDoesNothing(t *testing.T) {
	fake := &exectest.FakeCmder{}
	k := newKernelStorage()
	k.cmder, k.lookPath = fake, missing
	said, err := k.release()
	if err != nil || len(fake.Calls()) != 0 || !strings.Contains(said, "no drbdsetup on the host") || !strings.Contains(said, "no zpool on the host") {
		t.Errorf("without the tools: ran %q, said %q, %v", fake.Calls(), said, err)
	}

	// The tools without the modules: their listings fail, and nothing is up.
	fake = &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"drbdsetup status":      {Stderr: "Could not connect to 'drbd' generic netlink family\n", ExitCode: 20},
		"zpool list -H -o name": {Stderr: "The ZFS modules are not loaded.\n", ExitCode: 1},
	}}
	k.cmder, k.lookPath = fake, found
	said, err = k.release()
	if err != nil || len(fake.Calls()) != 2 || !strings.Contains(said, "no DRBD resources listed") || !strings.Contains(said, "no pools listed") {
		t.Errorf("without the modules: ran %q, said %q, %v", fake.Calls(), said, err)
	}

	// Nothing of the bed's: the host's own stay.
	fake = &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"drbdsetup status":      {Stdout: "r0 role:Primary\n  disk:UpToDate\nbaton-site-a-worker role:Secondary\n"},
		"zpool list -H -o name": {Stdout: "tank\n"},
	}}
	k.cmder = fake
	said, err = k.release()
	if err != nil || len(fake.Calls()) != 2 || !strings.Contains(said, "none of the bed's DRBD resources up") || !strings.Contains(said, "none of the bed's pools imported") {
		t.Errorf("nothing of the bed's: ran %q, said %q, %v", fake.Calls(), said, err)
	}
}

func TestTeardownNamesWhatItCouldNotRelease(t *testing.T) {
	fake := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"drbdsetup status":                          {Stdout: statusTwoNodes},
		"drbdsetup down pvc-1-baton-site-a-worker2": {},
		"drbdsetup down pvc-1-baton-site-a-worker":  {Stderr: "pvc-1-baton-site-a-worker: State change failed: (-12) Device is held open by someone\n", ExitCode: 11},
		"zpool list -H -o name":                     {Stdout: "baton-site-a-worker\n"},
		"zpool export baton-site-a-worker":          {Stderr: "cannot export 'baton-site-a-worker': pool is busy\n", ExitCode: 1},
	}}
	k := newKernelStorage()
	k.cmder, k.lookPath = fake, found
	said, err := k.release()
	if err == nil || !strings.Contains(err.Error(), "drbdsetup down pvc-1-baton-site-a-worker:") || !strings.Contains(err.Error(), "zpool export baton-site-a-worker") {
		t.Errorf("release: %v", err)
	}
	if !strings.Contains(said, "DRBD resources down: pvc-1-baton-site-a-worker2") {
		t.Errorf("said %q", said)
	}
}
