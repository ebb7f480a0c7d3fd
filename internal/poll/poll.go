// Package poll waits for a condition the waiter can only look at, saying
// what it last saw when the wait runs out.
package poll

import (
	"context"
	"fmt"
	"time"
)

// Until polls check every second until it holds or limit passes (or ctx
// ends); the error then carries check's last word.
func Until(ctx context.Context, limit time.Duration, check func() (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		ok, last := check()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s: %s", limit, last)
		case <-time.After(time.Second):
		}
	}
}

// Pause waits d, or until ctx ends (its error then).
func Pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
