package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/baton-dr/baton/internal/command"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/baton-dr/baton/node/btrfs"
	"github.com/baton-dr/baton/node/daemon"
	"github.com/baton-dr/baton/node/discovery"
	"github.com/baton-dr/baton/node/drbd"
	"github.com/baton-dr/baton/node/exec"
	"github.com/baton-dr/baton/node/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// storage opens the node's pool and its replicator. Adding a backend is one
// case of storageFor.
type storage func() (daemon.Pool, backend.Replicator, error)

// storageFor checks that the backend exists before anything is read or
// opened, and returns how to open it.
func storageFor(o options) (storage, error) {
	switch o.backend {
	case "btrfs":
		return func() (daemon.Pool, backend.Replicator, error) {
			pool, err := btrfs.New(btrfs.Options{Dir: o.poolDir, SizeBytes: o.poolSizeBytes})
			if err != nil {
				return nil, nil, fmt.Errorf("failed to open the btrfs pool in %s: %w", o.poolDir, err)
			}
			return pool, nil, nil // one replica per site: no DRBD
		}, nil
	case "zfs":
		return func() (daemon.Pool, backend.Replicator, error) {
			cmder := exec.Local{}
			if o.zfsPoolFile != "" {
				name, _, _ := strings.Cut(o.zfsDataset, "/")
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				if err := zfs.CreateFilePool(ctx, cmder, name, o.zfsPoolFile, o.poolSizeBytes); err != nil {
					return nil, nil, fmt.Errorf("failed to create or adopt zpool %s on %s: %w", name, o.zfsPoolFile, err)
				}
			}
			pool, err := zfs.New(zfs.Options{Cmder: cmder, Dataset: o.zfsDataset})
			if err != nil {
				return nil, nil, fmt.Errorf("failed to open zfs dataset %s: %w", o.zfsDataset, err)
			}
			replicator, err := drbd.New(drbd.Options{Cmder: cmder, Node: o.node, Backing: pool.DevicePath, ConfigDir: o.drbdConfigDir,
				SharedKernel: o.drbdShared})
			if err != nil {
				return nil, nil, fmt.Errorf("failed to drive DRBD: %w", err)
			}
			return zfsPool{pool}, replicator, nil
		}, nil
	}
	return nil, fmt.Errorf("--backend %q: want btrfs or zfs", o.backend)
}

// serve wires the daemon and runs it until ctx ends.
func serve(ctx context.Context, o options, stderr io.Writer) error {
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.Level(-4 * o.logLevel)}))
	w, err := wire(o, log)
	if err != nil {
		return err
	}
	if w.metricsListener != nil {
		go func() {
			if err := w.metrics.Serve(w.metricsListener); !errors.Is(err, http.ErrServerClosed) {
				log.Error("the metrics endpoint stopped", "error", err.Error())
			}
		}()
	}
	if o.discoveryFile != "" {
		discover(ctx, o, log)
	}
	err = w.daemon.Run(ctx)
	if w.metricsListener != nil {
		stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, w.metrics.Shutdown(stop))
	}
	return err
}

// wired is the daemon and its metrics endpoint, ready to run.
type wired struct {
	daemon          *daemon.Daemon
	metrics         *http.Server
	metricsListener net.Listener // nil: no metrics endpoint
}

// wire reads the files the flags name, opens the listeners and the pool,
// and builds the daemon. The pool opens last; whatever opened is closed
// again when a later step fails.
func wire(o options, log *slog.Logger) (w wired, err error) {
	openStorage, err := storageFor(o)
	if err != nil {
		return w, err
	}
	entry, err := localCluster(o)
	if err != nil {
		return w, err
	}
	config := daemon.Config{Node: o.node, Cluster: entry.ID, Address: o.advertise, DeviceDir: o.deviceDir,
		Interval: o.interval, Log: log}
	apiTLS := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.caFile != "" {
		if apiTLS.RootCAs, err = command.ReadRoots(o.caFile, "--ca-file"); err != nil {
			return w, err
		}
	}
	if config.API, err = storageapi.NewClient(storageapi.ClientConfig{ID: entry.ID, Endpoint: entry.Endpoint,
		Secret: entry.Secret, TLS: apiTLS, CallTimeout: o.callTimeout}); err != nil {
		return w, err
	}
	if o.peerCAFile != "" {
		if config.PeerRoots, err = command.ReadRoots(o.peerCAFile, "--peer-ca-file"); err != nil {
			return w, err
		}
	}
	var opened []io.Closer
	defer func() {
		if err != nil {
			for _, c := range opened {
				c.Close()
			}
		}
	}()
	if o.streamAddress != "" {
		cert, err := tls.LoadX509KeyPair(o.streamCert, o.streamKey)
		if err != nil {
			return w, fmt.Errorf("--stream-cert and --stream-key: %w", err)
		}
		config.StreamTLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		if config.StreamListener, err = net.Listen("tcp", o.streamAddress); err != nil {
			return w, fmt.Errorf("--stream-address: %w", err)
		}
		opened = append(opened, config.StreamListener)
	}
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	config.Registry = registry
	if o.metricsAddress != "0" {
		if w.metricsListener, err = net.Listen("tcp", o.metricsAddress); err != nil {
			return w, fmt.Errorf("--metrics-bind-address: %w", err)
		}
		opened = append(opened, w.metricsListener)
		w.metrics = metricsServer(registry)
	}
	pool, replicator, err := openStorage()
	if err != nil {
		return w, err
	}
	opened = append(opened, pool)
	config.Pool, config.Replicator = pool, replicator
	if w.daemon, err = daemon.New(config); err != nil {
		return w, err
	}
	log.Info("configured", "node", o.node, "cluster", string(entry.ID), "endpoint", entry.Endpoint,
		"backend", o.backend, "poolDir", o.poolDir, "streamAddress", o.streamAddress, "metrics", o.metricsAddress)
	return w, nil
}

// localCluster reads the clusters document and picks the local cluster the
// node serves. Errors never quote the document: it holds secrets.
func localCluster(o options) (storageapi.ClusterEntry, error) {
	data, err := os.ReadFile(o.secretFile)
	if err != nil {
		return storageapi.ClusterEntry{}, fmt.Errorf("--secret-file: %w", err)
	}
	clusters, err := storageapi.ParseClusters(data)
	if err != nil {
		return storageapi.ClusterEntry{}, fmt.Errorf("--secret-file %s: %w", o.secretFile, err)
	}
	local := clusters.Local()
	var entry storageapi.ClusterEntry
	switch {
	case o.clusterID != "":
		e, ok := clusters.Entry(chain.ClusterID(o.clusterID))
		if !ok || !e.Local {
			return entry, fmt.Errorf("--secret-file %s lists no local cluster %s (local: %v)", o.secretFile, o.clusterID, local)
		}
		entry = e
	case len(local) == 1:
		entry, _ = clusters.Entry(local[0])
	default:
		return entry, fmt.Errorf("--secret-file %s lists %d local clusters %v: choose one with --cluster-id", o.secretFile, len(local), local)
	}
	if o.clusterEndpoint != "" {
		entry.Endpoint = o.clusterEndpoint
	}
	return entry, nil
}

func metricsServer(registry *prometheus.Registry) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

// discover puts this node's candidate devices into the shared discovery
// list. A failure is logged: discovery serves deployment, never the data path.
func discover(ctx context.Context, o options, log *slog.Logger) {
	address, _, _ := net.SplitHostPort(o.advertise)
	options := discovery.Options{Node: o.node, Address: address}
	if o.backend == "btrfs" {
		options.LoopFiles = []string{btrfs.ImagePath(o.poolDir)}
	}
	node, skipped, err := discovery.Discover(ctx, options)
	if err == nil {
		err = discovery.Publish(o.discoveryFile, node)
	}
	if err != nil {
		log.Warn("discovery failed; the operator's discovery runs lack this node", "file", o.discoveryFile, "error", err.Error())
		return
	}
	for _, s := range skipped {
		log.Debug("not a candidate device", "path", s.Path, "reason", s.Reason)
	}
	log.Info("published candidate devices", "file", o.discoveryFile, "devices", len(node.Devices))
}

// zfsPool is a ZFS pool as the daemon holds it: nothing to close, the pool
// outlives the agent (zfs keeps no state in the process).
type zfsPool struct{ *zfs.Pool }

func (zfsPool) Close() error { return nil }
