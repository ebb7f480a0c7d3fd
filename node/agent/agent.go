package agent

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// StreamHeader travels ahead of a stream: what it is and where it goes.
type StreamHeader struct {
	Source   chain.ClusterID
	Dataset  string // the receiving dataset
	Snapshot string
	GUID     string
	// Token authorises the stream for the receiving replica; never logged.
	Token string
}

// Transport ships one stream to one receiving node of another site and calls
// done once with the bytes that crossed and the outcome -- from another
// goroutine in production, from a later event in the simulation. An error
// wrapping backend.ErrNoBase says the receiver lacks the stream's base.
type Transport interface {
	Ship(receiver core.Receiver, header StreamHeader, stream io.ReadCloser, done func(bytes uint64, err error))
}

// Options configure an agent.
type Options struct {
	Node    string
	Address string // where this node accepts streams
	Cluster chain.ClusterID
	Pool    backend.Pool
	// Replicator is nil on a site without DRBD (the btrfs mode: one replica
	// per site).
	Replicator backend.Replicator
	Transport  Transport
	Clock      backend.Clock
}

// Agent is one node's agent. Its methods are safe for concurrent use: in
// production streams arrive and finish on their own goroutines.
type Agent struct {
	options Options

	mu        sync.Mutex
	spec      core.NodeSpec // the last spec reconciled; Receive checks against it
	inFlight  map[string]bool
	receiving map[string]bool // datasets taking a stream now
	finished  []core.SendResult
}

// New returns an agent.
func New(options Options) (*Agent, error) {
	switch {
	case options.Node == "" || options.Pool == nil || options.Transport == nil || options.Clock == nil:
		return nil, errors.New("agent: node, pool, transport and clock are required")
	}
	return &Agent{options: options, inFlight: map[string]bool{}, receiving: map[string]bool{}}, nil
}

// ErrUnauthorized refuses a stream without the replica's token.
var ErrUnauthorized = errors.New("stream not authorised")

// ErrReplicaClosed refuses a stream for a replica this node does not take
// (unknown, or failed over: a superseded source's tail never lands here).
var ErrReplicaClosed = errors.New("replica does not take streams")

// Receive takes in a stream another site ships. A snapshot already held is
// success without reading the stream (the sender retried after a lost reply).
// The spec and the token are checked under the agent's lock; the stream itself
// is read outside it, one stream per dataset at a time, so a long stream holds
// up neither the node's reconcile nor streams into other replicas.
func (a *Agent) Receive(header StreamHeader, stream io.Reader) error {
	if err := a.admit(header); err != nil {
		return err
	}
	defer a.release(header.Dataset)
	if snaps, err := a.options.Pool.Snapshots(header.Dataset); err == nil {
		if slices.ContainsFunc(snaps, func(s backend.SnapshotInfo) bool { return s.GUID == header.GUID }) {
			return nil
		}
	}
	return a.options.Pool.Receive(header.Dataset, stream)
}

// ErrReceiving refuses a second stream into a dataset that is receiving one.
var ErrReceiving = fmt.Errorf("%w: dataset is receiving another stream", backend.ErrBusy)

// admit checks a stream against the last spec and marks its dataset busy.
func (a *Agent) admit(header StreamHeader) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.IndexFunc(a.spec.Replicas, func(r core.ReplicaSpec) bool { return r.Dataset == header.Dataset })
	if i < 0 || !a.spec.Replicas[i].Open || a.spec.Replicas[i].Source.Cluster != header.Source {
		return fmt.Errorf("%w: %s on %s", ErrReplicaClosed, header.Dataset, a.options.Node)
	}
	want := a.spec.Replicas[i].Token
	if want == "" || subtle.ConstantTimeCompare([]byte(header.Token), []byte(want)) != 1 {
		return fmt.Errorf("%w: stream for %s on %s presents the wrong token", ErrUnauthorized, header.Dataset, a.options.Node)
	}
	if a.receiving[header.Dataset] {
		return fmt.Errorf("%w: %s on %s", ErrReceiving, header.Dataset, a.options.Node)
	}
	a.receiving[header.Dataset] = true
	return nil
}

func (a *Agent) release(dataset string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.receiving, dataset)
}

func sendKey(s core.SendSpec) string { return s.Dataset + "@" + s.Snapshot + ">" + string(s.Target) }

func (a *Agent) now() time.Time { return a.options.Clock.Now() }
