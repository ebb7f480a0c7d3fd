package btrfs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/baton-dr/baton/node/exec"
)

// blkidNothingFound is blkid's exit code when it finds no signature.
const blkidNothingFound = 2

// probeFilesystem reports the filesystem type a device holds ("btrfs"), or ""
// for a device with no signature. It reads the device itself (-p), not
// blkid's cache, so a stale cache cannot make a pool look blank.
func probeFilesystem(ctx context.Context, cmder exec.Cmder, device string) (string, error) {
	out, err := exec.Output(cmder.Command(ctx, "blkid", "-p", "-o", "export", device))
	var run *exec.RunError
	if errors.As(err, &run) && run.ExitCode == blkidNothingFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return parseBlkid(out)
}

// parseBlkid reads `blkid -o export`: KEY=value lines. A device with a
// signature has a TYPE, or a PTTYPE for a partition table.
func parseBlkid(out []byte) (string, error) {
	values := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || key == "" {
			return "", fmt.Errorf("blkid: line %q is not KEY=value", line)
		}
		values[key] = value
	}
	switch {
	case values["TYPE"] != "":
		return values["TYPE"], nil
	case values["PTTYPE"] != "":
		return "partition table " + values["PTTYPE"], nil
	}
	return "", fmt.Errorf("blkid: a signature without a TYPE in %q", out)
}
