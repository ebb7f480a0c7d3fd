package zfs

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/storage/backend"
)

// tool names the tool whose words the refusals carry.
const tool = "zfs"

// refusal maps one of libzfs's messages to the kind of refusal it is.
type refusal struct {
	kind    error
	message *regexp.Regexp
}

// refusals is the one table from what zfs prints to backend's kinds, first
// match wins. The texts are libzfs's (OpenZFS 2.1: libzfs_dataset.c,
// libzfs_sendrecv.c, libzfs_util.c's zfs_standard_error), checked on real zfs
// in `make vmtest`; sim/zfs refuses with the same words. Names inside a
// message ('tank/v') are matched loosely, the rest exactly.
var refusals = []refusal{
	// Receive first: its messages name datasets that "exist" or "do not exist"
	// in a sense of their own.
	{backend.ErrDiverged, regexp.MustCompile(`destination \S+ has been modified since most recent snapshot`)},
	{backend.ErrNoBase, regexp.MustCompile(`most recent snapshot of \S+ does not match incremental source`)},
	{backend.ErrNoBase, regexp.MustCompile(`local origin for clone \S+ does not exist`)},
	{backend.ErrNoBase, regexp.MustCompile(`destination '[^']*' does not exist`)},
	{backend.ErrExists, regexp.MustCompile(`destination '[^']*' exists`)},
	{backend.ErrExists, regexp.MustCompile(`destination already exists`)},
	{backend.ErrInvalid, regexp.MustCompile(`invalid backup stream|checksum mismatch|incomplete stream|failed to read from stream|invalid stream|stream ends early|unsupported stream`)},
	{backend.ErrInvalid, regexp.MustCompile(`not an earlier snapshot from the same fs`)},

	{backend.ErrNotFound, regexp.MustCompile(`dataset does not exist`)},
	{backend.ErrNotFound, regexp.MustCompile(`could not find any snapshots to destroy`)},
	{backend.ErrNotFound, regexp.MustCompile(`no such pool`)},
	{backend.ErrExists, regexp.MustCompile(`dataset already exists`)},
	{backend.ErrPoolFull, regexp.MustCompile(`out of space|size is greater than available space|insufficient space`)},
	{backend.ErrBusy, regexp.MustCompile(`has dependent clones`)},
	{backend.ErrBusy, regexp.MustCompile(`dataset is busy|pool or dataset is busy`)},
	{backend.ErrBusy, regexp.MustCompile(`more recent snapshots or bookmarks exist`)},
	{backend.ErrRefused, regexp.MustCompile(`dataset is read-only|read-only file system`)},
	{backend.ErrInvalid, regexp.MustCompile(`volume size must be a multiple of volume block size|volume size cannot be zero|volume size is too large|invalid property value|bad property value`)},
	{backend.ErrInvalid, regexp.MustCompile(`delimiter '[@#/]' is not expected here|invalid character '.' in name|empty component|trailing slash in name|leading slash in name|name is too long|multiple '@' delimiters`)},
}

// classify turns a failed zfs command into a refusal of the kind its words
// say. A failure the table does not know stays the *exec.RunError it was:
// callers must not mistake an unexpected failure for an expected refusal.
func classify(err error) error {
	var run *exec.RunError
	if !errors.As(err, &run) {
		return err
	}
	message := run.Sentence()
	for _, r := range refusals {
		if r.message.MatchString(message) {
			return &backend.ToolError{Kind: r.kind, Tool: tool, Message: message}
		}
	}
	return err
}

// refuse is a refusal baton makes before zfs runs, in the form zfs prints
// its own ("cannot create 'tank/a/b': ...").
func refuse(kind error, format string, args ...any) error {
	return backend.Refusal(kind, tool, format, args...)
}

// errUnexpected reports output the parser could not read: the tool and
// baton disagree, which no retry fixes.
func errUnexpected(command string, err error) error {
	return fmt.Errorf("zfs %s: %w", command, err)
}
