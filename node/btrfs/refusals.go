package btrfs

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"syscall"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
)

// Tool names in the refusals this package returns. The tools' own words
// carry the tool's name; the pool's own refusals, for what no tool checks
// (a shrink, a diverged replica, a clone's dependency), carry poolTool.
const (
	btrfsTool  = "btrfs"
	kernelTool = "kernel" // a system call's error: the kernel's words, through Go
	poolTool   = "baton-btrfs"
)

// refusal is one line a tool prints when it refuses, as observed on this
// machine (btrfs-progs 6.2, util-linux 2.38.1, Linux 6.18), and the kind of
// refusal it is. Each row is matched against whole stderr lines, and each has
// a test fed with the real line (refusals_test.go).
type refusal struct {
	tool    string
	message *regexp.Regexp
	kind    error
}

func line(pattern string) *regexp.Regexp { return regexp.MustCompile("^" + pattern + "$") }

// refusals is the one table that turns the tools' messages into kinds.
// Everything a tool says that no row matches stays an unclassified error.
var refusals = []refusal{
	// btrfs subvolume create and snapshot onto a taken name.
	{btrfsTool, line(`ERROR: target path already exists: .+`), backend.ErrExists},
	// btrfs subvolume delete of a snapshot that a `btrfs send` reads.
	{btrfsTool, line(`ERROR: Could not destroy subvolume/snapshot: Operation not permitted`), backend.ErrBusy},
	// btrfs receive: an incremental stream whose base is not in the filesystem.
	{btrfsTool, line(`ERROR: cannot find parent subvolume`), backend.ErrNoBase},
	// btrfs receive: a received subvolume's name is taken.
	{btrfsTool, line(`ERROR: creating (subvolume|snapshot) .+ failed: File exists`), backend.ErrExists},
	// btrfs receive: broken streams.
	{btrfsTool, line(`ERROR: unexpected EOF in stream`), backend.ErrInvalid},
	{btrfsTool, line(`ERROR: short read from stream: expected \d+ read \d+`), backend.ErrInvalid},
	{btrfsTool, line(`ERROR: crc32 mismatch in command`), backend.ErrInvalid},
	{btrfsTool, line(`ERROR: unexpected header`), backend.ErrInvalid},
	{btrfsTool, line(`ERROR: empty stream is not considered valid`), backend.ErrInvalid},
	// btrfs receive into a pool that cannot hold the stream's data.
	{btrfsTool, line(`ERROR: writing to .+ failed: No space left on device`), backend.ErrPoolFull},
	// umount of the pool while a process works inside it.
	{"umount", line(`umount: .+: target is busy\.`), backend.ErrBusy},
	// mkfs.btrfs over a device that holds a filesystem (mkfs never gets -f).
	{"mkfs.btrfs", line(`ERROR: .+ appears to contain an existing filesystem \(.+\)`), backend.ErrExists},
}

// errnoRefusal is a system call's refusal: the operation as Go's
// *os.PathError names it, the errno, and the kind.
type errnoRefusal struct {
	op    string
	errno syscall.Errno
	kind  error
}

// errnoRefusals is the table of system call refusals.
var errnoRefusals = []errnoRefusal{
	// A write to a block device fenced with BLKROSET.
	{"write", syscall.EPERM, backend.ErrRefused},
	// A write that starts at or crosses a block device's end.
	{"write", syscall.ENOSPC, backend.ErrInvalid},
	// A thick volume's reservation the filesystem cannot hold.
	{"fallocate", syscall.ENOSPC, backend.ErrPoolFull},
	// A name taken between the pool's check and its rename.
	{"renameat2", syscall.EEXIST, backend.ErrExists},
}

// classify turns a failed command or system call into a refusal in the
// tool's words when a row of the tables matches it, and leaves it as it is
// otherwise.
func classify(err error) error {
	var run *exec.RunError
	if errors.As(err, &run) && len(run.Command) > 0 {
		tool := filepath.Base(run.Command[0])
		for _, l := range run.Lines() {
			for _, r := range refusals {
				if r.tool == tool && r.message.MatchString(l) {
					return &backend.ToolError{Kind: r.kind, Tool: tool, Message: run.Words()}
				}
			}
		}
		return err
	}
	var path *os.PathError
	var errno syscall.Errno
	if errors.As(err, &path) && errors.As(path.Err, &errno) {
		for _, r := range errnoRefusals {
			if r.op == path.Op && r.errno == errno {
				return &backend.ToolError{Kind: r.kind, Tool: kernelTool, Message: path.Error()}
			}
		}
	}
	return err
}

// refuse is a refusal in the pool's own words.
func refuse(kind error, format string, args ...any) error {
	return backend.Refusal(kind, poolTool, format, args...)
}
