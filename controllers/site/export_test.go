package site

import (
	"context"

	"github.com/baton-dr/baton/storage/core"
)

// Do runs f with the site's core, holding the operator's mutex: for tests
// that arrange the core's records through its synchronous shell. f must not
// ask a peer.
func (o *Operator) Do(ctx context.Context, f func(*core.Site) error) error {
	s, release, err := o.acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	return f(s)
}
