package daemon

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/baton-dr/baton/node/agent"
	"github.com/baton-dr/baton/node/stream"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// API is what the node agent asks of its site's storage API
// (storageapi.Client in production, storageapi.Local in tests).
type API interface {
	Spec(ctx context.Context, node string) (core.NodeSpec, error)
	Report(ctx context.Context, status core.NodeStatus) error
}

// Pool is the node's storage pool; the daemon closes it when it stops.
type Pool interface {
	backend.Pool
	Close() error
}

// Config configures a daemon. Node, Cluster, API, Pool and Interval are
// required; the rest is optional and says what leaving it out means.
type Config struct {
	Node    string
	Cluster chain.ClusterID
	// Address is where peer sites reach this node's stream server
	// (host:port), reported to the site; empty reports none.
	Address string
	API     API
	Pool    Pool
	// Replicator is DRBD; nil in the btrfs mode (one replica per site).
	Replicator backend.Replicator
	// PeerRoots verify the stream servers of other sites' nodes. Nil: the
	// node ships nothing, and every send fails with ErrNoPeerRoots.
	PeerRoots *x509.CertPool
	// StreamListener and StreamTLS make the stream server other sites ship
	// to; a nil listener takes no streams. Run serves it; Close closes it.
	StreamListener net.Listener
	StreamTLS      *tls.Config
	// DeviceDir is where the daemon keeps a link per Up volume to its block
	// device (the btrfs mode's loop devices); empty keeps none. The pool must
	// then name devices (DevicePath, as *btrfs.Pool does).
	DeviceDir string
	// Interval is the pause between the end of a pass and the next.
	Interval time.Duration
	// Clock is the agent's; nil is the wall clock.
	Clock backend.Clock
	// Log gets the daemon's lines; nil discards. No secret reaches it.
	Log *slog.Logger
	// Registry takes the daemon's Prometheus metrics; nil keeps none.
	Registry prometheus.Registerer
	// AfterPass, when set, is called by Run after every pass.
	AfterPass func(PassResult)
}

// ErrNoPeerRoots fails the sends of a daemon configured without the CAs of
// peer sites' stream servers.
var ErrNoPeerRoots = errors.New("no CAs to verify peer sites' stream servers: this node ships no streams")

// Daemon is one node agent process: the agent, its loop, its stream server
// and client, its device links and metrics.
type Daemon struct {
	config  Config
	log     *slog.Logger
	agent   *agent.Agent
	client  *stream.Client // nil without PeerRoots
	server  *stream.Server // nil without a listener
	links   *links         // nil without a device directory
	metrics *metrics       // nil without a registry

	// Owned by the goroutine that runs passes.
	unreported []core.SendResult
	problems   []string

	serving   chan error // Serve's outcome, once Run started the server
	closeOnce sync.Once
	closeErr  error
}

// New checks the configuration and builds the daemon. Nothing runs until Run.
func New(config Config) (*Daemon, error) {
	if err := config.validate(); err != nil {
		return nil, err
	}
	d := &Daemon{config: config, log: config.Log}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if config.Clock == nil {
		d.config.Clock = wallClock{}
	}
	var transport agent.Transport = refusingTransport{}
	if config.PeerRoots != nil {
		client, err := stream.NewClient(stream.ClientOptions{RootCAs: config.PeerRoots})
		if err != nil {
			return nil, err
		}
		d.client, transport = client, client
	}
	a, err := agent.New(agent.Options{Node: config.Node, Address: config.Address, Cluster: config.Cluster,
		Pool: config.Pool, Replicator: config.Replicator, Transport: transport, Clock: d.config.Clock})
	if err != nil {
		return nil, err
	}
	d.agent = a
	if config.StreamListener != nil {
		server, err := stream.NewServer(stream.ServerOptions{TLS: config.StreamTLS, Receiver: a,
			Logger: d.log.With("component", "stream-server")})
		if err != nil {
			return nil, err
		}
		d.server = server
	}
	if config.DeviceDir != "" {
		if d.links, err = newLinks(config.DeviceDir, config.Pool); err != nil {
			return nil, err
		}
	}
	if config.Registry != nil {
		if d.metrics, err = newMetrics(config.Registry, d.client, d.server); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (c Config) validate() error {
	var problems []error
	if c.Node == "" {
		problems = append(problems, errors.New("no node name"))
	}
	if !chain.IsUUID(string(c.Cluster)) {
		problems = append(problems, fmt.Errorf("cluster %q is not a lower-case UUID", c.Cluster))
	}
	if c.API == nil || c.Pool == nil {
		problems = append(problems, errors.New("no storage API or no pool"))
	}
	if c.Interval <= 0 {
		problems = append(problems, fmt.Errorf("interval %s is not positive", c.Interval))
	}
	if c.StreamListener != nil && c.StreamTLS == nil {
		problems = append(problems, errors.New("a stream listener without TLS"))
	}
	if err := errors.Join(problems...); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	return nil
}

// Run serves streams and runs a pass every interval until ctx ends, then
// finishes the pass in progress and closes everything (see Close). It
// returns what closing found wrong, nil after a clean stop.
func (d *Daemon) Run(ctx context.Context) error {
	if d.server != nil {
		d.serving = make(chan error, 1)
		go func() { d.serving <- d.server.Serve(d.config.StreamListener) }()
	}
	d.log.Info("node agent started", "node", d.config.Node, "cluster", string(d.config.Cluster),
		"address", d.config.Address, "interval", d.config.Interval, "streams", d.server != nil,
		"ships", d.client != nil, "deviceDir", d.config.DeviceDir)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		if ctx.Err() != nil {
			break
		}
		// The pass runs to its end even if ctx ends meanwhile: a report cut
		// off would leave the site a pass behind for nothing.
		result := d.Pass(context.WithoutCancel(ctx))
		if d.config.AfterPass != nil {
			d.config.AfterPass(result)
		}
		timer.Reset(d.config.Interval)
	}
	d.log.Info("node agent stopping", "node", d.config.Node)
	err := d.Close()
	if err == nil {
		d.log.Info("node agent stopped", "node", d.config.Node)
	}
	return err
}

// Close stops the daemon in order: the stream server, the stream client,
// the device links and devices, and the pool -- unless a device is in use
// (a filesystem on it is mounted), which leaves that device and the pool as
// they are for the next start to adopt. Closing twice returns the first
// outcome. Close does not wait for a pass in progress: Run calls it after its
// last pass.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.close() })
	return d.closeErr
}

func (d *Daemon) close() error {
	var errs []error
	switch {
	case d.server != nil && d.serving != nil:
		errs = append(errs, d.server.Close(), <-d.serving)
	case d.server != nil:
		errs = append(errs, d.server.Close(), d.config.StreamListener.Close())
	}
	if d.client != nil {
		errs = append(errs, d.client.Close())
	}
	var inUse []string
	if d.links != nil {
		var err error
		inUse, err = d.links.close()
		errs = append(errs, err)
	}
	if len(inUse) > 0 {
		d.log.Warn("leaving the pool open: volumes are in use; the next start adopts them", "volumes", inUse)
	} else if err := d.config.Pool.Close(); err != nil {
		errs = append(errs, fmt.Errorf("failed to close the pool: %w", err))
	}
	return errors.Join(errs...)
}

// Agent is the daemon's agent (tests drive streams into it).
func (d *Daemon) Agent() *agent.Agent { return d.agent }

// StreamStats reads the stream client's and server's counters; zero for a
// side the daemon does not run.
func (d *Daemon) StreamStats() (sent, received stream.Stats) {
	if d.client != nil {
		sent = d.client.Counters().Stats()
	}
	if d.server != nil {
		received = d.server.Counters().Stats()
	}
	return sent, received
}

// refusingTransport is the transport of a daemon that cannot verify peers.
type refusingTransport struct{}

func (refusingTransport) Ship(_ core.Receiver, _ agent.StreamHeader, stream io.ReadCloser, done func(uint64, error)) {
	stream.Close()
	done(0, ErrNoPeerRoots)
}

// wallClock is production's clock.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }
