// Command baton-csi is baton's CSI driver; it also serves the csi-addons replication service.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/baton-dr/baton/internal/command"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"

	"github.com/baton-dr/baton/csi"
	"github.com/baton-dr/baton/storageapi"
)

const usage = `Usage: baton-csi [flags]

The CSI driver. It serves CSI Identity, Controller and Node and the
csi-addons Identity and Replication services on unix sockets, resolving every
volume handle along its replication chain to the member an RPC must act on.

Each request's secrets carry the clusters document (key "clusters"):
{"clusters":[{"cluster_id","cluster_endpoint","cluster_secret","local":true}]};
--clusters-file names the same document, mounted from the Secret, for the
requests that carry none (node RPCs).

Modes: controller serves Identity, Controller and (on --csi-addons-address)
the csi-addons services; node serves Identity and Node; all serves
everything.

Flags:
`

// defaultSyncPatience is how long ResyncVolume waits for the sync it kicked
// (and PromoteVolume for a final sync) before it answers. csi-addons v0.12.0
// asks a not-ready resync again only 30 s later, so each not-ready answer
// adds up to 30 s in which the data may land unseen: with 20 s, a
// demote and resync after a 90 s cut on the real bed took 53-55 s, its data
// shipped in the first half of it (issue 40). Waiting up to 2 minutes makes a
// resync as long as its data takes; it stays below the 3-minute deadline the
// csi-addons manager and sidecar give each call, and each VR has a reconcile
// of its own (the manager runs up to 100 at once).
const defaultSyncPatience = 2 * time.Minute

// defaultDeviceWait is how long NodeStageVolume waits for the device of a
// volume the node agent is still making, and NodeExpandVolume for the device
// the agent is growing. The agent makes (grows) it on its next pass (a
// second apart on the beds) once the volume is placed here (expanded); 30 s
// leaves several passes to a busy agent and stays well inside the 2-minute
// deadline the kubelet gives a stage.
const defaultDeviceWait = 30 * time.Second

type options struct {
	endpoint, addonsAddress, nodeID, site, clustersFile, mode string
	caFile, devices, deviceDir, driverName                    string
	callTimeout, syncPatience, deviceWait                     time.Duration
	verbosity                                                 int
}

func main() {
	command.Exit("baton-csi", run(os.Args[1:], os.Stderr))
}

func parse(args []string, output io.Writer) (options, error) {
	var o options
	flags := command.NewFlagSet("baton-csi", usage, output)
	flags.StringVar(&o.endpoint, "endpoint", "unix:///csi/csi.sock", "CSI unix socket")
	flags.StringVar(&o.addonsAddress, "csi-addons-address", "unix:///run/csi-addons/socket", "csi-addons unix socket (controller and all modes)")
	flags.StringVar(&o.nodeID, "node-id", "", "this node's name, as the site's storage nodes are named (node and all modes)")
	flags.StringVar(&o.site, "site", "", "this site's name, reported as topology "+csi.TopologySite)
	flags.StringVar(&o.clustersFile, "clusters-file", "", "the clusters document, for requests without secrets")
	flags.StringVar(&o.mode, "mode", "all", "controller, node or all")
	flags.StringVar(&o.caFile, "ca-file", "", "PEM certificates that sign the storage APIs (default: the system roots)")
	flags.StringVar(&o.devices, "devices", "drbd", "how the node finds a volume's device: drbd (/dev/drbd<minor>) or links (<device-dir>/<dataset>)")
	flags.StringVar(&o.deviceDir, "device-dir", "", "directory of device nodes (drbd: /dev) or of the node agent's links")
	flags.StringVar(&o.driverName, "driver-name", csi.DriverName, "CSI driver name")
	flags.DurationVar(&o.callTimeout, "call-timeout", storageapi.DefaultCallTimeout, "deadline of each storage API call")
	flags.DurationVar(&o.syncPatience, "sync-patience", defaultSyncPatience,
		"how long ResyncVolume waits for the sync it kicked before it answers not ready, and PromoteVolume for the demoted source's final sync before it answers Unavailable (csi-addons asks again only 30 s or its backoff later; 0: answer at once)")
	flags.DurationVar(&o.deviceWait, "device-wait", defaultDeviceWait,
		"how long NodeStageVolume waits for a volume's device the node agent is still making, watching where it appears, and NodeExpandVolume for the device to grow to the volume's size, watching the kernel's uevents, before they answer Unavailable (0: answer at once)")
	flags.IntVar(&o.verbosity, "v", 0, "log verbosity (1: every call)")
	if err := flags.Parse(args); err != nil {
		return o, err
	}
	switch {
	case flags.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %v", flags.Args())
	case o.mode != "controller" && o.mode != "node" && o.mode != "all":
		return o, fmt.Errorf("--mode %q: want controller, node or all", o.mode)
	case o.mode != "controller" && o.nodeID == "":
		return o, fmt.Errorf("--node-id is required in %s mode", o.mode)
	case o.devices != "drbd" && o.devices != "links":
		return o, fmt.Errorf("--devices %q: want drbd or links", o.devices)
	case o.devices == "links" && o.deviceDir == "":
		return o, errors.New("--devices links needs --device-dir")
	}
	return o, nil
}

func run(args []string, output io.Writer) error {
	o, err := parse(args, output)
	if err != nil {
		return err
	}
	if err := command.SeededBugs("baton-csi", os.Stderr); err != nil {
		return err
	}
	log := logr.FromSlogHandler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(-o.verbosity)}))
	services, err := build(o)
	if err != nil {
		return err
	}
	servers := map[net.Listener]*grpc.Server{}
	listener, err := csi.ListenUnix(o.endpoint)
	if err != nil {
		return err
	}
	servers[listener] = csi.NewCSIServer(services, log)
	if services.Replication != nil {
		addons, err := csi.ListenUnix(o.addonsAddress)
		if err != nil {
			return err
		}
		servers[addons] = csi.NewAddonsServer(services, log)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log.Info("serving", "mode", o.mode, "endpoint", o.endpoint, "csiAddons", o.addonsAddress, "node", o.nodeID, "site", o.site)
	return csi.Serve(ctx, servers)
}

// build wires the services the mode asks for.
func build(o options) (csi.Services, error) {
	clusters := &csi.Clusters{Dialer: &csi.HTTPDialer{CallTimeout: o.callTimeout}}
	if o.caFile != "" {
		pool, err := command.ReadRoots(o.caFile, "--ca-file")
		if err != nil {
			return csi.Services{}, err
		}
		clusters.Dialer = &csi.HTTPDialer{CallTimeout: o.callTimeout, TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	}
	if o.clustersFile != "" {
		data, err := os.ReadFile(o.clustersFile)
		if err != nil {
			return csi.Services{}, err
		}
		config, err := storageapi.ParseClusters(data)
		if err != nil {
			return csi.Services{}, fmt.Errorf("--clusters-file %s: %w", o.clustersFile, err)
		}
		clusters.Default = &config
	}
	assembly := csi.Assembly{Name: o.driverName, Version: version(), Clusters: clusters, Controller: o.mode != "node",
		SyncWait: csi.WallSyncWait(o.syncPatience, 500*time.Millisecond)}
	if o.mode != "controller" {
		var devices csi.Devices = csi.DRBDDevices{Dir: o.deviceDir}
		if o.devices == "links" {
			devices = csi.LinkDevices{Dir: o.deviceDir}
		}
		assembly.Node = &csi.NodeAssembly{ID: o.nodeID, Site: o.site, Devices: devices, Mounter: csi.OSMounter{},
			DeviceWait: o.deviceWait}
	}
	return csi.Assemble(assembly), nil
}
