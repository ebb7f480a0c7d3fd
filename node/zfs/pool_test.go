package zfs

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec/exectest"
	"github.com/baton-dr/baton/storage/backend"
)

// fakePool is a Pool over a FakeCmder that knows the dataset "tank".
func fakePool(t *testing.T, replies map[string]exectest.Reply) (*Pool, *exectest.FakeCmder) {
	t.Helper()
	fake := &exectest.FakeCmder{Replies: map[string]exectest.Reply{"zfs list -H -p -o name tank": {Stdout: "tank\n"}}}
	for line, reply := range replies {
		fake.Replies[line] = reply
	}
	pool, err := New(Options{Cmder: fake, Dataset: "tank"})
	if err != nil {
		t.Fatal(err)
	}
	return pool, fake
}

func TestNewAdoptsOnlyAnExistingDataset(t *testing.T) {
	fake := &exectest.FakeCmder{Replies: map[string]exectest.Reply{
		"zfs list -H -p -o name tank/missing": {Stderr: "cannot open 'tank/missing': dataset does not exist\n", ExitCode: 1},
	}}
	_, err := New(Options{Cmder: fake, Dataset: "tank/missing"})
	if !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("New over a missing dataset: %v, want ErrNotFound", err)
	}
	if calls := fake.Calls(); len(calls) != 1 {
		t.Fatalf("New ran %v; it must only look", calls)
	}
}

func TestProvisioningPicksTheCreateFlags(t *testing.T) {
	pool, fake := fakePool(t, map[string]exectest.Reply{"zfs create": {}})
	if err := pool.CreateVolume("thin", 32<<20, backend.Thin); err != nil {
		t.Fatal(err)
	}
	if err := pool.CreateVolume("thick", 32<<20, backend.Thick); err != nil {
		t.Fatal(err)
	}
	calls := fake.Calls()[1:]
	want := []string{"zfs create -s -V 33554432 tank/thin", "zfs create -V 33554432 tank/thick"}
	if strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Fatalf("ran %q, want %q", calls, want)
	}
}

func TestBadNamesAreRefusedBeforeZfsRuns(t *testing.T) {
	pool, fake := fakePool(t, nil)
	for _, name := range []string{"", "a@b", "a/b", "a#b", "..", "a*b", strings.Repeat("x", 300)} {
		err := pool.CreateVolume(name, 32<<20, backend.Thin)
		var toolErr *backend.ToolError
		if !errors.Is(err, backend.ErrInvalid) || !errors.As(err, &toolErr) || !strings.HasPrefix(toolErr.Message, "cannot create 'tank/") {
			t.Errorf("CreateVolume(%q) = %v, want ErrInvalid in zfs's form", name, err)
		}
	}
	if err := pool.Snapshot("v", "a@b"); !errors.Is(err, backend.ErrInvalid) {
		t.Errorf("Snapshot(v, a@b) = %v, want ErrInvalid", err)
	}
	if calls := fake.Calls(); len(calls) != 1 {
		t.Fatalf("bad names reached zfs: %v", calls[1:])
	}
}

func TestShrinkIsRefusedAndGrowSetsVolsize(t *testing.T) {
	list := "zfs list -H -p -t volume -o " + volumeColumns + " tank/v"
	pool, fake := fakePool(t, map[string]exectest.Reply{
		list:       {Stdout: "tank/v\t67108864\t0\t0\t-\toff\n"},
		"zfs set ": {},
	})
	if err := pool.ResizeVolume("v", 32<<20); !errors.Is(err, backend.ErrInvalid) {
		t.Fatalf("a shrink: %v, want ErrInvalid", err)
	}
	if err := pool.ResizeVolume("v", 64<<20); err != nil {
		t.Fatalf("a resize to the same size: %v", err)
	}
	if err := pool.ResizeVolume("v", 128<<20); err != nil {
		t.Fatal(err)
	}
	var sets []string
	for _, c := range fake.Calls() {
		if strings.HasPrefix(c, "zfs set") {
			sets = append(sets, c)
		}
	}
	if len(sets) != 1 || sets[0] != "zfs set volsize=134217728 tank/v" {
		t.Fatalf("zfs set ran %q; only the grow may set volsize", sets)
	}
}

// DestroyVolume must never take dependent clones with it (-R), and
// Receive must never roll a target back (-F).
func TestDestructiveFlagsAreNeverUsed(t *testing.T) {
	pool, fake := fakePool(t, map[string]exectest.Reply{"zfs destroy": {}, "zfs receive": {}})
	if err := pool.DestroyVolume("v"); err != nil {
		t.Fatal(err)
	}
	if err := pool.Receive("v", strings.NewReader("stream")); err != nil {
		t.Fatal(err)
	}
	calls := fake.Calls()[1:]
	if calls[0] != "zfs destroy -r tank/v" || calls[1] != "zfs receive -u tank/v" {
		t.Fatalf("ran %q", calls)
	}
	if got := string(fake.Stdin("zfs receive -u tank/v")); got != "stream" {
		t.Fatalf("zfs receive read %q", got)
	}
}

func TestSendDryRunsFirstAndNamesTheBase(t *testing.T) {
	pool, _ := fakePool(t, map[string]exectest.Reply{
		"zfs send -n -P -i tank/v@missing tank/v@b": {Stderr: "cannot open 'tank/v@missing': dataset does not exist\n", ExitCode: 1},
		"zfs send -n -P -i tank/origin@s tank/c@t":  {Stdout: "incremental\ts\ttank/c@t\t1024\nsize\t1024\n"},
		"zfs send -i tank/origin@s tank/c@t":        {Stdout: "STREAM"},
	})
	_, err := pool.Send("v", "missing", "b")
	if !errors.Is(err, backend.ErrNotFound) {
		t.Fatalf("Send from a missing base: %v, want ErrNotFound from the dry run", err)
	}
	stream, err := pool.Send("c", "origin@s", "t")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(stream)
	if err != nil || string(data) != "STREAM" {
		t.Fatalf("stream read %q, %v", data, err)
	}
	if err := stream.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestVolumeNamesTheOriginInThePool(t *testing.T) {
	list := "zfs list -H -p -t volume -o " + volumeColumns
	pool, _ := fakePool(t, map[string]exectest.Reply{
		list + " -r -d 1 tank": {Stdout: "tank/z\t1048576\t1200000\t0\t-\ton\ntank/c\t1048576\t0\t0\ttank/v@s\toff\n"},
	})
	volumes, err := pool.Volumes()
	if err != nil {
		t.Fatal(err)
	}
	want := []backend.VolumeInfo{
		{Name: "c", SizeBytes: 1 << 20, Origin: "v@s"},
		{Name: "z", SizeBytes: 1 << 20, Provisioning: backend.Thick, ReadOnly: true},
	}
	if len(volumes) != 2 || volumes[0] != want[0] || volumes[1] != want[1] {
		t.Fatalf("Volumes = %+v, want %+v", volumes, want)
	}
}
