package btrfs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
)

// observed are failures of the real tools on this machine: the command, what
// it printed on stderr, word for word, and the kind the pool must report.
// Every row of the refusals table must be matched by one of them.
var observed = []struct {
	command []string
	stderr  string
	kind    error // nil: not a refusal, the error stays unclassified
}{
	{[]string{"btrfs", "subvolume", "create", "volumes/v/head"},
		"ERROR: target path already exists: volumes/v/head\n", backend.ErrExists},
	{[]string{"btrfs", "subvolume", "delete", "--commit-after", "/p/mnt/volumes/v/snapshots/s2"},
		"ERROR: Could not destroy subvolume/snapshot: Operation not permitted\n" +
			"WARNING: deletion failed with EPERM, you don't have permissions or send may be in progress\n" +
			"Delete subvolume (no-commit): '/p/mnt/volumes/v/snapshots/s2'\n", backend.ErrBusy},
	{[]string{"btrfs", "receive", "-e", "/p/mnt/volumes/r/snapshots"},
		"At snapshot s3\nERROR: cannot find parent subvolume\n", backend.ErrNoBase},
	{[]string{"btrfs", "receive", "-e", "mnt/rx"}, "At subvol s2\nERROR: creating subvolume s2 failed: File exists\n", backend.ErrExists},
	{[]string{"btrfs", "receive", "-e", "mnt/rx"}, "At snapshot s3\nERROR: creating snapshot rx/s2 -> s3 failed: File exists\n", backend.ErrExists},
	{[]string{"btrfs", "receive", "-e", "mnt/rx"}, "At subvol s2\nERROR: unexpected EOF in stream\n", backend.ErrInvalid},
	{[]string{"btrfs", "receive", "-e", "mnt/rx"}, "At subvol s2\nERROR: short read from stream: expected 10 read 5\n", backend.ErrInvalid},
	{[]string{"btrfs", "receive", "-e", "mnt/rx"}, "At subvol s2\nERROR: crc32 mismatch in command\n", backend.ErrInvalid},
	{[]string{"btrfs", "receive", "-e", "mnt/rx"}, "ERROR: unexpected header\n", backend.ErrInvalid},
	{[]string{"btrfs", "receive", "-e", "mnt/rx"}, "ERROR: empty stream is not considered valid\n", backend.ErrInvalid},
	{[]string{"btrfs", "receive", "-e", "b/"}, "At subvol s\nERROR: writing to data failed: No space left on device\n", backend.ErrPoolFull},
	{[]string{"umount", "/tmp/bx3/b"}, "umount: /tmp/bx3/b: target is busy.\n", backend.ErrBusy},
	{[]string{"mkfs.btrfs", "-q", "-L", "baton", "/dev/loop1"},
		"ERROR: /dev/loop1 appears to contain an existing filesystem (btrfs)\nERROR: use the -f option to force overwrite of /dev/loop1\n",
		backend.ErrExists},
	// Failures that are no refusal of the pool's kinds stay as they are.
	{[]string{"btrfs", "subvolume", "show", "volumes/nothere"},
		"ERROR: cannot find real path for 'volumes/nothere': No such file or directory\n", nil},
	{[]string{"btrfs", "subvolume", "snapshot", "-r", "volumes/missing/head", "volumes/v/snapshots/s2"},
		"ERROR: Could not statfs: No such file or directory\n", nil},
	// A tool's message matches only that tool's rows.
	{[]string{"zfs", "receive"}, "ERROR: cannot find parent subvolume\n", nil},
}

func TestRefusalsTableClassifiesTheObservedMessages(t *testing.T) {
	used := make([]bool, len(refusals))
	for _, o := range observed {
		run := &exec.RunError{Command: o.command, ExitCode: 1, Stderr: []byte(o.stderr), Err: errors.New("exit status 1")}
		got := classify(fmt.Errorf("wrapped: %w", run))
		var toolErr *backend.ToolError
		switch {
		case o.kind == nil && errors.As(got, &toolErr):
			t.Errorf("%q: classified as %v, want it left alone", o.stderr, toolErr.Kind)
		case o.kind != nil && (!errors.As(got, &toolErr) || toolErr.Kind != o.kind):
			t.Errorf("%q: got %v, want %v", o.stderr, got, o.kind)
		case o.kind != nil && (toolErr.Tool != o.command[0] || toolErr.Message != run.Words()):
			t.Errorf("%q: the refusal %+v does not carry the tool's name and words", o.stderr, toolErr)
		}
		for i, r := range refusals {
			for _, l := range run.Lines() {
				if r.tool == o.command[0] && r.message.MatchString(l) {
					used[i] = true
				}
			}
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("row %d (%s %s) is matched by no observed message", i, refusals[i].tool, refusals[i].message)
		}
	}
}

func TestErrnoRefusals(t *testing.T) {
	for _, c := range []struct {
		err  error
		kind error
	}{
		{&os.PathError{Op: "write", Path: "/dev/loop2", Err: syscall.EPERM}, backend.ErrRefused},
		{&os.PathError{Op: "write", Path: "/dev/loop2", Err: syscall.ENOSPC}, backend.ErrInvalid},
		{&os.PathError{Op: "fallocate", Path: "/p/data", Err: syscall.ENOSPC}, backend.ErrPoolFull},
		{&os.PathError{Op: "renameat2", Path: "/p/mnt/volumes/v", Err: syscall.EEXIST}, backend.ErrExists},
		{&os.PathError{Op: "read", Path: "/dev/loop2", Err: syscall.EIO}, nil},
		{&os.PathError{Op: "fallocate", Path: "/p/data", Err: syscall.EIO}, nil},
		{errors.New("plain"), nil},
		{nil, nil},
	} {
		got := classify(c.err)
		var toolErr *backend.ToolError
		if c.kind == nil {
			if got != c.err {
				t.Errorf("%v: became %v, want it left alone", c.err, got)
			}
			continue
		}
		if !errors.As(got, &toolErr) || toolErr.Kind != c.kind || toolErr.Tool != kernelTool || toolErr.Message != c.err.Error() {
			t.Errorf("%v: got %v, want %v in the kernel's words", c.err, got, c.kind)
		}
	}
}
