package btrfs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/baton-dr/baton/node/exec"
)

// mountOptions: noatime, because an access time written by a read would be a
// change to the volume's subvolume, and a replica that was only read must not
// look diverged.
const mountOptions = "noatime"

func mount(ctx context.Context, cmder exec.Cmder, device, directory string) error {
	return classify(cmder.Command(ctx, "mount", "-t", "btrfs", "-o", mountOptions, device, directory).Run())
}

func unmount(ctx context.Context, cmder exec.Cmder, directory string) error {
	return classify(cmder.Command(ctx, "umount", directory).Run())
}

// mounted is a filesystem mounted on a directory.
type mounted struct {
	source string // "/dev/loop3"
	fsType string // "btrfs"
}

// findmntNothingFound is findmnt's exit code when nothing is mounted there.
const findmntNothingFound = 1

// findMount reports what is mounted on a directory; ok is false for nothing.
func findMount(ctx context.Context, cmder exec.Cmder, directory string) (mounted, bool, error) {
	out, err := exec.Output(cmder.Command(ctx, "findmnt", "--json", "--output", "SOURCE,FSTYPE", "--mountpoint", directory))
	var run *exec.RunError
	if errors.As(err, &run) && run.ExitCode == findmntNothingFound && len(run.Stderr) == 0 {
		return mounted{}, false, nil
	}
	if err != nil {
		return mounted{}, false, err
	}
	m, err := parseFindmnt(out)
	return m, err == nil, err
}

// parseFindmnt reads `findmnt --json --output SOURCE,FSTYPE`. Stacked mounts
// list several filesystems; the last one is the one visible.
func parseFindmnt(out []byte) (mounted, error) {
	var parsed struct {
		Filesystems []struct {
			Source string `json:"source"`
			FSType string `json:"fstype"`
		} `json:"filesystems"`
	}
	if err := json.Unmarshal(out, &parsed); err != nil {
		return mounted{}, fmt.Errorf("parsing findmnt --json: %w", err)
	}
	if len(parsed.Filesystems) == 0 {
		return mounted{}, fmt.Errorf("findmnt --json: no filesystem in %q", out)
	}
	last := parsed.Filesystems[len(parsed.Filesystems)-1]
	if last.Source == "" || last.FSType == "" {
		return mounted{}, fmt.Errorf("findmnt --json: a filesystem without source or type in %q", out)
	}
	return mounted{source: last.Source, fsType: last.FSType}, nil
}
