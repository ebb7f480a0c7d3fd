package site

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
)

// Ticker ticks the operator's core every Interval while this replica of the
// operator is the leader. It is the one loop with a wall clock: the core and
// the reconcilers read the operator's Clock and are driven from outside.
type Ticker struct {
	Operator *Operator
	Interval time.Duration
	Log      logr.Logger
}

// NeedLeaderElection keeps a standby replica from ticking: two tickers would
// take every snapshot twice.
func (t *Ticker) NeedLeaderElection() bool { return true }

// Start ticks until ctx ends. A failed tick is logged and retried on the next.
func (t *Ticker) Start(ctx context.Context) error {
	ticker := time.NewTicker(t.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		switch err := t.Operator.Tick(ctx); {
		case errors.Is(err, ErrNoCluster):
			t.Log.V(1).Info("waiting for a StorageCluster", "reason", err.Error())
		case err != nil:
			t.Log.Error(err, "tick failed")
		}
	}
}
