package webapps

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-dr/baton/internal/poll"
)

// readyPoll is how often WaitReady asks.
const readyPoll = time.Second

// waitReady asks the health path until it answers 2xx, for at most limit.
// It returns ErrUnavailable naming the last answer when the limit passes: an
// application whose database does not recover never answers 2xx here.
func (e endpoint) waitReady(ctx context.Context, path string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	start := time.Now()
	last := "no answer yet"
	for {
		a, err := e.call(ctx, request{method: "GET", path: path, noAuth: true})
		switch {
		case err == nil && a.ok():
			return nil
		case err != nil:
			last = err.Error()
		default:
			last = a.errorf("GET " + path).Error()
		}
		if err := poll.Pause(ctx, readyPoll); err != nil {
			return fmt.Errorf("%w: %s did not answer 2xx within %s; last: %s", ErrUnavailable,
				e.base.Redacted()+path, time.Since(start).Round(time.Second), last)
		}
	}
}
