package exectest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/baton-dr/baton/node/exec"
)

func TestFakeAnswersByLineOrLongestPrefix(t *testing.T) {
	f := &FakeCmder{Replies: map[string]Reply{
		"btrfs subvolume":              {Stdout: "generic"},
		"btrfs subvolume list -r /mnt": {Stdout: "exact"},
		"btrfs subvolume delete":       {Stderr: "ERROR: Could not destroy subvolume/snapshot: Operation not permitted", ExitCode: 1},
	}}
	ctx := context.Background()
	for _, c := range []struct{ line, want string }{
		{"btrfs subvolume list -r /mnt", "exact"}, {"btrfs subvolume show /x", "generic"},
	} {
		line, want := c.line, c.want
		words := strings.Fields(line)
		out, err := exec.Output(f.Command(ctx, words[0], words[1:]...))
		if err != nil || string(out) != want {
			t.Fatalf("%s: got %q, %v; want %q", line, out, err, want)
		}
	}
	err := f.Command(ctx, "btrfs", "subvolume", "delete", "/x").Run()
	var run *exec.RunError
	if !errors.As(err, &run) || run.ExitCode != 1 || !strings.Contains(run.Words(), "Operation not permitted") {
		t.Fatalf("a scripted failure: %v", err)
	}
	if err := f.Command(ctx, "zfs", "list").Run(); !errors.As(err, &run) || run.ExitCode != -1 {
		t.Fatalf("an unscripted command: %v, want a RunError as of a missing program", err)
	}
	if got := strings.Join(f.Calls(), "|"); got != "btrfs subvolume list -r /mnt|btrfs subvolume show /x|btrfs subvolume delete /x|zfs list" {
		t.Fatalf("calls %q", got)
	}
}

func TestFakeRecordsStdin(t *testing.T) {
	f := &FakeCmder{Replies: map[string]Reply{"btrfs receive": {}}}
	if err := f.Command(context.Background(), "btrfs", "receive", "/d").SetStdin(strings.NewReader("stream")).Run(); err != nil {
		t.Fatal(err)
	}
	if got := string(f.Stdin("btrfs receive /d")); got != "stream" {
		t.Fatalf("stdin %q", got)
	}
}
