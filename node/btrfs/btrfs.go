package btrfs

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/baton-dr/baton/node/exec"
)

// btrfsCommand runs btrfs-progs' `btrfs`. Every failure goes through
// classify, so a refusal reaches the caller as a *backend.ToolError in
// btrfs's words.
type btrfsCommand struct {
	cmder exec.Cmder
}

func (b btrfsCommand) run(ctx context.Context, args ...string) error {
	return classify(b.cmder.Command(ctx, "btrfs", args...).Run())
}

func (b btrfsCommand) output(ctx context.Context, args ...string) ([]byte, error) {
	out, err := exec.Output(b.cmder.Command(ctx, "btrfs", args...))
	return out, classify(err)
}

func (b btrfsCommand) createSubvolume(ctx context.Context, path string) error {
	return b.run(ctx, "subvolume", "create", path)
}

// snapshot snapshots a subvolume; destination must not exist (btrfs would
// put the snapshot inside an existing directory).
func (b btrfsCommand) snapshot(ctx context.Context, source, destination string, readOnly bool) error {
	args := []string{"subvolume", "snapshot"}
	if readOnly {
		args = append(args, "-r")
	}
	return b.run(ctx, append(args, source, destination)...)
}

// deleteSubvolumes deletes subvolumes and commits. The space they held comes
// back only once the cleaner has dropped them: see waitCleaned.
func (b btrfsCommand) deleteSubvolumes(ctx context.Context, paths ...string) error {
	if len(paths) == 0 {
		return nil
	}
	return b.run(ctx, append([]string{"subvolume", "delete", "--commit-after"}, paths...)...)
}

// cleanWait bounds waitCleaned. The cleaner drops a deleted subvolume in
// well under a second here; it waits longer only while a file of the
// subvolume is still open, and then the space comes back once it closes, as
// zfs frees a destroyed dataset's blocks in the background.
const cleanWait = time.Minute

// waitCleaned waits until every deleted subvolume is gone and its space
// free, or cleanWait has passed: the deletion is done either way.
func (b btrfsCommand) waitCleaned(ctx context.Context, mount string) error {
	ctx, cancel := context.WithTimeout(ctx, cleanWait)
	defer cancel()
	err := b.run(ctx, "subvolume", "sync", mount)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// list lists the filesystem's subvolumes; readOnly lists only read-only ones.
func (b btrfsCommand) list(ctx context.Context, mount string, readOnly bool) ([]subvolume, error) {
	args := []string{"subvolume", "list", "-uqRcg"}
	if readOnly {
		args = append(args, "-r")
	}
	out, err := b.output(ctx, append(args, mount)...)
	if err != nil {
		return nil, err
	}
	return parseSubvolumeList(out)
}

func (b btrfsCommand) show(ctx context.Context, path string) (subvolume, error) {
	out, err := b.output(ctx, "subvolume", "show", path)
	if err != nil {
		return subvolume{}, err
	}
	return parseSubvolumeShow(out)
}

// sync commits the running transaction: what was written is in the
// subvolumes' generations afterwards.
func (b btrfsCommand) sync(ctx context.Context, mount string) error {
	return b.run(ctx, "filesystem", "sync", mount)
}

func (b btrfsCommand) usage(ctx context.Context, mount string) (fsUsage, error) {
	out, err := b.output(ctx, "filesystem", "usage", "-b", mount)
	if err != nil {
		return fsUsage{}, err
	}
	return parseUsage(out)
}

// exclusiveBytes reports each file's bytes that no other file references.
func (b btrfsCommand) exclusiveBytes(ctx context.Context, files ...string) (map[string]uint64, error) {
	if len(files) == 0 {
		return map[string]uint64{}, nil
	}
	out, err := b.output(ctx, append([]string{"filesystem", "du", "-s", "--raw"}, files...)...)
	if err != nil {
		return nil, err
	}
	exclusive, err := parseDu(out)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if _, ok := exclusive[f]; !ok {
			return nil, fmt.Errorf("filesystem du: no line for %s", f)
		}
	}
	return exclusive, nil
}

// send writes the stream of a read-only snapshot to w: the whole of it, or
// with parent the difference from that snapshot.
func (b btrfsCommand) send(ctx context.Context, parent, snapshot string, w io.Writer) error {
	args := []string{"send", "-q"}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return classify(b.cmder.Command(ctx, "btrfs", append(args, snapshot)...).SetStdout(w).Run())
}

// receive reads one stream from r into a new subvolume under directory. -e
// stops at the stream's end command, so bytes after it cannot make a second
// subvolume.
func (b btrfsCommand) receive(ctx context.Context, directory string, r io.Reader) error {
	return classify(b.cmder.Command(ctx, "btrfs", "receive", "-e", directory).SetStdin(r).Run())
}
