package local

import (
	"context"
	"errors"
	"fmt"

	"github.com/baton-dr/baton/node/leftovers"
)

// scrub unmounts and detaches whatever is left under dir once the processes
// stopped: after a clean stop, nothing (the node agents leave no mount and
// no loop device); after a failure, what the failure left -- removed, and
// an error that says so.
func scrub(dir string) error {
	if dir == "" {
		return nil
	}
	mounts, loops, err := leftovers.Scrub(context.Background(), dir)
	if mounts+loops > 0 {
		err = errors.Join(err, fmt.Errorf("the bed's processes left %d mounts and %d loop devices under %s (removed)",
			mounts, loops, dir))
	}
	return err
}
