package btrfs

import (
	"context"

	"github.com/baton-dr/baton/node/exec"
)

// mkfs makes a btrfs filesystem on a device. It never passes -f: over an
// existing filesystem mkfs.btrfs refuses, and the refusal is ErrExists.
func mkfs(ctx context.Context, cmder exec.Cmder, device, label string) error {
	return classify(cmder.Command(ctx, "mkfs.btrfs", "-q", "-L", label, device).Run())
}
