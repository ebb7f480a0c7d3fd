package csi

import (
	"context"
	"time"

	"github.com/baton-dr/baton/internal/poll"
)

// ResyncWait is how ResyncVolume waits for the sync its resync kicked,
// before it answers not ready.
//
// Why wait at all: the csi-addons controller asks again only 30 s after a
// resync that is not ready (volumereplication_controller.go, v0.12.0, a
// fixed RequeueAfter) and gives the call 3 minutes. A resync re-aims the
// end's replication and makes a sync due at once; the delta of a
// relocation ships in a second or two, so answering not ready at once costs
// every relocation and fail-back 30 s per volume for nothing. Looking again
// for a while, under the call's own deadline, answers ready on the first
// call whenever the sync lands within it.
type ResyncWait struct {
	// Looks is how many more times ResyncVolume looks at a resync that is
	// not ready; zero answers at once (the simulation, whose clock is not
	// the wall's, and whose csi-addons model asks again on its own clock).
	Looks int
	// Pause passes the time between two looks; it fails when ctx ends.
	Pause func(ctx context.Context) error
}

// WallResyncWait waits up to patience in steps of every, on the wall clock:
// what baton-csi serves.
func WallResyncWait(patience, every time.Duration) ResyncWait {
	if every <= 0 || patience < every {
		return ResyncWait{}
	}
	return ResyncWait{Looks: int(patience / every), Pause: func(ctx context.Context) error { return poll.Pause(ctx, every) }}
}
