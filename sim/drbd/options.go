package drbd

import (
	"errors"
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/backend"
)

// Scheduler is the part of the simulation kernel the DRBD model needs: the
// simulated clock, deferred events, and the world's event log.
type Scheduler interface {
	Now() time.Time
	After(d time.Duration, label string, f func())
	Logf(kind, format string, args ...any)
}

// Links says whether one node can reach another; a TCP connection needs both
// directions.
type Links interface {
	Reachable(from, to string) bool
}

// Opener opens one of a node's pool volumes for block I/O (backend.Pool.Open).
type Opener func(volume string) (backend.Device, error)

// NodeOptions names one storage node of the site and how to reach its pool.
type NodeOptions struct {
	Name string
	Open Opener
}

// Defaults of the options left zero.
const (
	// DefaultResyncBytesPerSecond is DRBD 9's default c-max-rate (100 MiB/s).
	DefaultResyncBytesPerSecond = 100 << 20
	// DefaultResyncChunkBytes bounds the work of one resync event.
	DefaultResyncChunkBytes = 1 << 20
)

// FencingPolicy is DRBD's `disk { fencing ...; }`, without a fence-peer
// handler (none can reach a partitioned peer anyway).
type FencingPolicy uint8

const (
	// FenceResourceOnly (baton's configuration, and the zero value): a Secondary
	// that leaves a Primary gracefully outdates itself, and a node may become
	// Primary only while every diskful peer is Connected or known to be
	// Outdated, unless forced ("Forced into split brain situation!") or, with
	// quorum enabled, while it has quorum.
	FenceResourceOnly FencingPolicy = iota
	// FenceDontCare is DRBD's default: nothing is outdated, any UpToDate node
	// may become Primary while its peers are unknown.
	FenceDontCare
)

func (f FencingPolicy) String() string {
	switch f {
	case FenceResourceOnly:
		return "resource-only"
	case FenceDontCare:
		return "dont-care"
	}
	return "FencingPolicy(?)"
}

// Options configure a Cluster.
type Options struct {
	// Site names the site; it seeds the data generation UUIDs and marks the
	// metadata this Cluster writes, so that two sites never mint the same UUID.
	Site      string
	Nodes     []NodeOptions
	Scheduler Scheduler
	Links     Links
	// ResyncBytesPerSecond is the resync bandwidth of one connection.
	ResyncBytesPerSecond uint64
	// ResyncChunkBytes is how much one resync event copies; it is rounded up to
	// whole 4 KiB blocks.
	ResyncChunkBytes uint64
	// Quorum enables `quorum majority; on-no-quorum io-error;` on every
	// resource: a node that sees no majority of the resource's nodes (itself
	// included) refuses promotion and fails writes.
	Quorum bool
	// Fencing is the fencing policy of every resource.
	Fencing FencingPolicy
	// FullResync leaves out `csums-alg`: a resync writes every block its
	// bitmap marks. With csums-alg (baton's configuration, the zero value)
	// the peers compare each marked block's checksum first, and a block the
	// target already holds is neither sent nor written -- which keeps a
	// zvol's untouched blocks out of its next incremental snapshot.
	FullResync bool
}

// validate collects every problem of the options, as kind's Validate does.
func (o Options) validate() error {
	var problems []error
	if o.Site == "" {
		problems = append(problems, errors.New("empty Site"))
	}
	if o.Scheduler == nil {
		problems = append(problems, errors.New("nil Scheduler"))
	}
	if o.Links == nil {
		problems = append(problems, errors.New("nil Links"))
	}
	if o.Fencing != FenceResourceOnly && o.Fencing != FenceDontCare {
		problems = append(problems, fmt.Errorf("unknown fencing policy %d", o.Fencing))
	}
	if len(o.Nodes) == 0 {
		problems = append(problems, errors.New("no Nodes"))
	}
	seen := map[string]bool{}
	for i, n := range o.Nodes {
		switch {
		case n.Name == "":
			problems = append(problems, fmt.Errorf("node %d has no name", i))
		case seen[n.Name]:
			problems = append(problems, fmt.Errorf("node %q twice", n.Name))
		case n.Open == nil:
			problems = append(problems, fmt.Errorf("node %q has no Open", n.Name))
		}
		seen[n.Name] = true
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: drbd options: %w", backend.ErrInvalid, errors.Join(problems...))
}

func (o Options) withDefaults() Options {
	if o.ResyncBytesPerSecond == 0 {
		o.ResyncBytesPerSecond = DefaultResyncBytesPerSecond
	}
	if o.ResyncChunkBytes == 0 {
		o.ResyncChunkBytes = DefaultResyncChunkBytes
	}
	o.ResyncChunkBytes = (o.ResyncChunkBytes + blockBytes - 1) / blockBytes * blockBytes
	o.Nodes = append([]NodeOptions(nil), o.Nodes...)
	return o
}
