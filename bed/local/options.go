package local

import (
	"io"
	"time"

	"github.com/baton-dr/baton/internal/syncio"
)

// Options shape a local bed.
type Options struct {
	// Dir holds the bed's files: pools, sockets, certificates, logs. Empty:
	// a new temporary directory that Close removes.
	Dir string
	// Binaries is the directory holding baton-controller, baton-node and
	// baton-csi. Empty: New builds them from this checkout with go build.
	Binaries string
	// TimeScale is how many seconds of a scenario's time pass per second of
	// the wall clock: Run(3*time.Minute) lasts 3 s at 60, and so do the
	// csi-addons controller's intervals (Ramen's 30 s info and resync
	// periods become half a second). Default 60.
	TimeScale float64
	// ReplicationInterval is the sites' snapshot interval, in wall time (the
	// StorageClusters' replicationInterval). Default 2 s.
	ReplicationInterval time.Duration
	// ActionLimit bounds each DR action in wall time; past it the action
	// failed (a liveness failure). Default 2 minutes.
	ActionLimit time.Duration
	// Seed seeds the applications' workload models.
	Seed uint64
	// Log receives a line per step of the bed's life; nil discards them.
	Log io.Writer
}

func (o Options) withDefaults() Options {
	if o.TimeScale <= 0 {
		o.TimeScale = 60
	}
	if o.ReplicationInterval <= 0 {
		o.ReplicationInterval = 2 * time.Second
	}
	if o.ActionLimit <= 0 {
		o.ActionLimit = 2 * time.Minute
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	o.Log = &syncio.Writer{W: o.Log} // the bed's goroutines log whole lines
	return o
}

// wall converts a scenario's duration into wall time.
func (o Options) wall(d time.Duration) time.Duration {
	return time.Duration(float64(d) / o.TimeScale)
}
