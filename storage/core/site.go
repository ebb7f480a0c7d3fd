package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/placement"
)

// Expected outcomes. The storage API maps each to one status code.
var (
	ErrNotFound = errors.New("not found")
	// ErrExists: a volume name is taken by a volume of another shape.
	ErrExists = errors.New("already exists")
	// ErrInvalid: the request is malformed.
	ErrInvalid = errors.New("invalid request")
	// ErrNotLocal: the member addressed lives on another cluster.
	ErrNotLocal = errors.New("member is not on this cluster")
	// ErrPeerUnreachable: the other site could not be asked.
	ErrPeerUnreachable = errors.New("peer site unreachable")
	// ErrPeerPrimary: the source is still a live primary (fail-over without force).
	ErrPeerPrimary = errors.New("peer still holds a live primary")
	// ErrFinalSyncPending: the source is fenced but its final snapshot has not
	// arrived here yet; a planned fail-over waits for it.
	ErrFinalSyncPending = errors.New("final sync of the demoted source has not arrived")
	// ErrNoReplica: this site keeps no replica of the member.
	ErrNoReplica = errors.New("no replica of the member on this site")
	// ErrNoSnapshot: the replica has received nothing to fail over to.
	ErrNoSnapshot = errors.New("replica holds no snapshot yet")
	// ErrSuperseded: the member was failed over; it no longer ships.
	ErrSuperseded = errors.New("member was superseded by a fail-over")
	// ErrReplicated: the volume takes part in replication and cannot be deleted.
	ErrReplicated = errors.New("volume is replicated")
	// ErrNoCapacity: no placement satisfies the request.
	ErrNoCapacity = errors.New("not enough capacity")
	// ErrConflict: the request contradicts what is recorded (a second successor).
	ErrConflict = errors.New("conflicts with the recorded chain")
)

// Config is one site's settings.
type Config struct {
	Cluster chain.ClusterID
	// Interval and Retention are the defaults of new pairings.
	Interval  time.Duration
	Retention int
	Placement placement.Config
	// ThinOvercommitPercent lets thin pools promise more than they hold.
	ThinOvercommitPercent uint64
	// NewVolumeID names new volumes: UUIDv4 in production, seeded in the simulation.
	NewVolumeID func() chain.VolumeID
	// ReplicaToken is the secret a sender presents with each stream of the
	// replica of source: derived from the cluster's own secret in production
	// (an HMAC, so nothing secret is stored in a record), seeded in the
	// simulation. Nil leaves replicas without a token (tests without streams).
	ReplicaToken func(source chain.Ref) string
}

// Site is the control plane of one site. Its decisions (Decide) read the
// store and return their effects; its methods of the operations' names are a
// synchronous shell over them. Either may be called concurrently for
// operations whose records do not overlap: the shell (storageapi.Local)
// locks a chain's records, and the allocation's, around each decision and
// its writes; the Store must be safe for concurrent use.
type Site struct {
	config Config
	store  Store
	// peers serve the synchronous shell, and the shells that ask and send
	// through them (Peers).
	peers Peers
	clock backend.Clock
	// tx is set on the view of one operation being decided.
	tx *txn
}

// New returns the control plane of the site config names.
func New(config Config, store Store, peers Peers, clock backend.Clock) (*Site, error) {
	switch {
	case !chain.IsUUID(string(config.Cluster)):
		return nil, fmt.Errorf("%w: cluster %q is not a UUID", ErrInvalid, config.Cluster)
	case config.NewVolumeID == nil:
		return nil, fmt.Errorf("%w: no volume ID source", ErrInvalid)
	}
	if config.Interval <= 0 {
		config.Interval = 5 * time.Minute
	}
	if config.Retention < 2 {
		config.Retention = 2
	}
	if config.Placement.Default.LastPort == 0 {
		config.Placement = placement.DefaultConfig()
	}
	if config.ThinOvercommitPercent == 0 {
		config.ThinOvercommitPercent = 100
	}
	return &Site{config: config, store: store, peers: peers, clock: clock}, nil
}

// Store holds the site's records: a shell commits decisions' writes to it.
func (s *Site) Store() Store { return s.store }

// Peers reaches the other sites, as New was given them.
func (s *Site) Peers() Peers { return s.peers }

// Cluster is the site's cluster ID.
func (s *Site) Cluster() chain.ClusterID { return s.config.Cluster }

func (s *Site) now() time.Time { return s.clock.Now() }

// token is the secret the streams of source's replica present.
func (s *Site) token(source chain.Ref) string {
	if s.config.ReplicaToken == nil {
		return ""
	}
	return s.config.ReplicaToken(source)
}

// ignoreNotFound makes a missing record no error.
func ignoreNotFound(err error) error {
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// local checks that ref lives here.
func (s *Site) local(ref chain.Ref) error {
	if ref.Cluster != s.config.Cluster {
		return fmt.Errorf("%w: %s is on %s, this is %s", ErrNotLocal, ref, ref.Cluster, s.config.Cluster)
	}
	return nil
}
