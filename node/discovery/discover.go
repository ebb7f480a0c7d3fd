package discovery

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/baton-dr/baton/node/exec"
)

// Options say what node Discover describes.
type Options struct {
	Node    string
	Address string // the node's address, the proposed DRBD address
	// LoopFiles are files that may hold a loop-backed pool (the btrfs mode's
	// image); those that exist are reported.
	LoopFiles []string
	// Cmder runs lsblk and blkid; nil runs them on this machine.
	Cmder exec.Cmder
}

// Skipped is a device Discover left out, and why (for the log).
type Skipped struct {
	Path   string
	Reason string
}

// blkidNothingFound is blkid's exit code when a device carries no signature.
const blkidNothingFound = 2

// Discover lists the node's candidate devices, sorted by path, and the
// devices it left out.
func Discover(ctx context.Context, options Options) (Node, []Skipped, error) {
	if options.Node == "" {
		return Node{}, nil, errors.New("discovery: no node name")
	}
	cmder := options.Cmder
	if cmder == nil {
		cmder = exec.Local{}
	}
	out, err := exec.Output(cmder.Command(ctx, "lsblk", lsblkArgs...))
	if err != nil {
		return Node{}, nil, fmt.Errorf("discovery: %w", err)
	}
	devices, err := parseLsblk(out)
	if err != nil {
		return Node{}, nil, fmt.Errorf("discovery: %w", err)
	}
	node := Node{Name: options.Node, Address: options.Address}
	var skipped []Skipped
	for _, d := range devices {
		c, reason := candidate(d)
		if reason == "" {
			reason, err = probe(ctx, cmder, d.Path)
			if err != nil {
				return Node{}, nil, fmt.Errorf("discovery: %w", err)
			}
		}
		if reason != "" {
			skipped = append(skipped, Skipped{Path: d.Path, Reason: reason})
			continue
		}
		node.Devices = append(node.Devices, c)
	}
	for _, path := range options.LoopFiles {
		info, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Node{}, nil, fmt.Errorf("discovery: %w", err)
		}
		if !info.Mode().IsRegular() || len(path) > maxFieldBytes {
			skipped = append(skipped, Skipped{Path: path, Reason: "not a regular file with a short path"})
			continue
		}
		node.Devices = append(node.Devices, Device{Path: path, Type: LoopFile, SizeBytes: info.Size()})
	}
	slices.SortFunc(node.Devices, func(a, b Device) int { return cmp.Compare(a.Path, b.Path) })
	return node, skipped, nil
}

// probe asks blkid whether the device itself (-p: not blkid's cache) carries
// a signature lsblk did not show -- a filesystem, a partition table, a RAID
// or ZFS member. It returns why the device is no candidate, or "".
func probe(ctx context.Context, cmder exec.Cmder, path string) (string, error) {
	err := cmder.Command(ctx, "blkid", "-p", path).Run()
	var run *exec.RunError
	switch {
	case errors.As(err, &run) && run.ExitCode == blkidNothingFound:
		return "", nil
	case err != nil:
		return "", err
	}
	return "carries a signature (blkid -p)", nil
}
