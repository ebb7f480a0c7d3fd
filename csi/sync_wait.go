package csi

import (
	"context"
	"time"

	"github.com/baton-dr/baton/internal/poll"
)

// SyncWait is how a call that waits on a sync in flight looks again before
// it answers: ResyncVolume for the sync its resync kicked, before it answers
// not ready, and PromoteVolume for the final sync of the source a planned
// relocation demoted, before it answers Unavailable.
//
// Why wait at all: the csi-addons controller asks again only 30 s after a
// resync that is not ready (volumereplication_controller.go, v0.12.0, a
// fixed RequeueAfter) and gives the call 3 minutes; a promotion refused
// Unavailable it asks again on its rate limiter's backoff (on the real bed
// 16 s and more later). A resync re-aims the end's replication and makes a
// sync due at once, and a demotion ships its final snapshot at once; the
// delta of a relocation ships in a second or two, so answering at once
// costs every relocation and fail-back its retry's wait per volume for
// nothing. Looking again for a while, under the call's own deadline,
// answers on the first call whenever the sync lands within it.
type SyncWait struct {
	// Looks is how many more times a call looks again; zero answers at
	// once (the simulation, whose clock is not the wall's, and whose
	// csi-addons model asks again on its own clock).
	Looks int
	// Pause passes the time between two looks; it fails when ctx ends.
	Pause func(ctx context.Context) error
}

// again reports whether a call that has already looked again `looked` times
// may look once more: yes while fewer than Looks, after the pause. The call's
// deadline during the pause ends the wait: the call answers what its last
// look saw.
func (w SyncWait) again(ctx context.Context, looked int) bool {
	return looked < w.Looks && w.Pause(ctx) == nil
}

// WallSyncWait waits up to patience in steps of every, on the wall clock:
// what baton-csi serves.
func WallSyncWait(patience, every time.Duration) SyncWait {
	if every <= 0 || patience < every {
		return SyncWait{}
	}
	return SyncWait{Looks: int(patience / every), Pause: func(ctx context.Context) error { return poll.Pause(ctx, every) }}
}
