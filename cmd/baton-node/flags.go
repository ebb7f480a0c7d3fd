package main

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/baton-dr/baton/internal/command"
	"github.com/baton-dr/baton/node/drbd"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// options are the node agent's configuration, all from flags.
type options struct {
	node            string
	clusterID       string
	clusterEndpoint string
	secretFile      string
	caFile          string
	callTimeout     time.Duration
	backend         string
	poolDir         string
	poolSizeBytes   uint64
	zfsDataset      string
	zfsPoolFile     string
	drbdConfigDir   string
	drbdShared      drbd.SharedKernel
	drbdMinorOffset string // --drbd-minor-offset as given; drbdShared has this node's
	deviceDir       string
	streamAddress   string
	streamCert      string
	streamKey       string
	peerCAFile      string
	advertise       string
	interval        time.Duration
	metricsAddress  string
	discoveryFile   string
	logLevel        int
}

func parseFlags(args []string, output io.Writer) (options, error) {
	var o options
	flags := command.NewFlagSet("baton-node", usage, output)
	flags.StringVar(&o.node, "node", "", "this node's name, as the site's storage nodes are named (required)")
	flags.StringVar(&o.secretFile, "secret-file", "", "file holding the clusters document of the CSI secret (required; never logged)")
	flags.StringVar(&o.clusterID, "cluster-id", "", "the local cluster to serve, when the clusters document lists several")
	flags.StringVar(&o.clusterEndpoint, "cluster-endpoint", "",
		"https URL of the site's storage API; empty takes the local cluster's cluster_endpoint from --secret-file")
	flags.StringVar(&o.caFile, "ca-file", "", "PEM certificates that sign the storage API's; empty trusts the system roots")
	flags.DurationVar(&o.callTimeout, "call-timeout", storageapi.DefaultCallTimeout, "deadline of each storage API call")
	flags.StringVar(&o.backend, "backend", "", "the node's storage: btrfs (a loop-backed btrfs pool, one replica per site) or zfs (ZFS and DRBD) (required)")
	flags.StringVar(&o.poolDir, "pool-dir", "", "btrfs: absolute directory of the pool's image (pool.img) and mount point; an existing pool is adopted")
	flags.Uint64Var(&o.poolSizeBytes, "pool-size-bytes", 0, "btrfs: size of the sparse image created when --pool-dir holds none; 0 only adopts (zfs: the size of --zfs-pool-file)")
	flags.StringVar(&o.zfsDataset, "zfs-dataset", "", "zfs: the dataset holding the node's zvols, e.g. tank/baton (its pool must exist, or come from --zfs-pool-file)")
	flags.StringVar(&o.zfsPoolFile, "zfs-pool-file", "", "zfs: a sparse file the dataset's pool lives on (the beds); created with --pool-size-bytes when missing, an existing pool is imported or adopted, never re-created")
	flags.StringVar(&o.drbdConfigDir, "drbd-config-dir", "", "zfs: where DRBD resource files go (default /var/lib/baton/drbd); the node's name must equal its hostname, as drbdadm matches them")
	flags.StringVar(&o.drbdShared.Suffix, "drbd-resource-suffix", "",
		"zfs: this node shares its kernel with other storage nodes (kind's nodes, one host's containers): name its DRBD resources <resource>-<suffix>, e.g. the node's name; empty for a kernel of the node's own")
	flags.StringVar(&o.drbdMinorOffset, "drbd-minor-offset", "",
		"zfs, with --drbd-resource-suffix: add this to every DRBD minor so that the nodes on one kernel use disjoint minors; "+
			"a number, or node=number,... (a DaemonSet gives every node the same arguments) of which the node takes its own")
	flags.StringVar(&o.deviceDir, "device-dir", "",
		"btrfs: directory of the links <dataset> -> the volume's loop device that baton-csi --devices links reads; empty keeps none")
	flags.StringVar(&o.streamAddress, "stream-address", "", "address to take peer sites' snapshot streams on (TLS); empty takes none")
	flags.StringVar(&o.streamCert, "stream-cert", "", "PEM certificate (chain) of the stream server; required with --stream-address")
	flags.StringVar(&o.streamKey, "stream-key", "", "PEM private key of --stream-cert")
	flags.StringVar(&o.peerCAFile, "peer-ca-file", "", "PEM CAs that sign peer sites' stream servers; empty ships no streams")
	flags.StringVar(&o.advertise, "advertise-address", "",
		"host:port peers reach the stream server at, reported to the site (required with --stream-address; the host must be in --stream-cert)")
	flags.DurationVar(&o.interval, "interval", 2*time.Second, "pause between the end of one reconcile pass and the start of the next")
	flags.StringVar(&o.metricsAddress, "metrics-bind-address", ":9480", "address of the Prometheus /metrics endpoint; 0 disables it")
	flags.StringVar(&o.discoveryFile, "discovery-file", "",
		"JSON list shared with the operator's --discovery-file: the node puts its candidate devices in at start; empty skips discovery")
	flags.IntVar(&o.logLevel, "v", 0, "log verbosity (0 info, 1 every pass)")
	if err := command.Parse(flags, args); err != nil {
		return o, err
	}
	return o, o.validate(output)
}

// validate prints every problem of the flags together.
func (o *options) validate(output io.Writer) error {
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if o.node == "" || len(o.node) > 253 {
		problem("--node must name this node (1 to 253 characters)")
	}
	if o.secretFile == "" {
		problem("--secret-file is required: the storage API takes the cluster secret")
	}
	if o.clusterID != "" && !chain.IsUUID(o.clusterID) {
		problem("--cluster-id %q is not a lower-case UUID", o.clusterID)
	}
	switch o.backend {
	case "btrfs":
		if !filepath.IsAbs(o.poolDir) {
			problem("--backend btrfs needs --pool-dir, an absolute directory")
		}
	case "zfs":
		if o.zfsDataset == "" {
			problem("--backend zfs needs --zfs-dataset")
		}
		if o.zfsPoolFile != "" && !filepath.IsAbs(o.zfsPoolFile) {
			problem("--zfs-pool-file %q is not an absolute path", o.zfsPoolFile)
		}
	default:
		problem("--backend %q: want btrfs or zfs", o.backend)
	}
	if o.drbdMinorOffset != "" {
		offset, err := minorOffset(o.drbdMinorOffset, o.node)
		if err != nil {
			problem("--drbd-minor-offset %q: %v", o.drbdMinorOffset, err)
		}
		o.drbdShared.MinorOffset = offset
	}
	if o.drbdShared != (drbd.SharedKernel{}) {
		if o.backend != "zfs" {
			problem("--drbd-resource-suffix and --drbd-minor-offset go with --backend zfs")
		} else if err := o.drbdShared.Check(); err != nil {
			problem("--drbd-resource-suffix %q --drbd-minor-offset %d: %v", o.drbdShared.Suffix, o.drbdShared.MinorOffset, err)
		}
	}
	if o.deviceDir != "" && !filepath.IsAbs(o.deviceDir) {
		problem("--device-dir %q is not an absolute path", o.deviceDir)
	}
	if o.interval <= 0 || o.callTimeout <= 0 {
		problem("--interval %s and --call-timeout %s must be positive", o.interval, o.callTimeout)
	}
	problems = append(problems, o.streamProblems()...)
	return command.Problems(output, "baton-node", problems)
}

// streamProblems checks the stream server's flags: all of them or none.
func (o *options) streamProblems() []string {
	if o.streamAddress == "" {
		if o.streamCert != "" || o.streamKey != "" || o.advertise != "" {
			return []string{"--stream-cert, --stream-key and --advertise-address go with --stream-address"}
		}
		return nil
	}
	var problems []string
	if o.streamCert == "" || o.streamKey == "" {
		problems = append(problems, "--stream-address needs --stream-cert and --stream-key: streams travel over TLS only")
	}
	host, port, err := net.SplitHostPort(o.advertise)
	switch {
	case err != nil || host == "" || port == "" || port == "0":
		problems = append(problems, fmt.Sprintf("--advertise-address %q must be host:port, where peers reach --stream-address", o.advertise))
	case net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified():
		problems = append(problems, fmt.Sprintf("--advertise-address %q names no host peers can reach", o.advertise))
	}
	return problems
}

// minorOffset reads --drbd-minor-offset: a number, or a list node=number
// from which the node takes its own entry. The list is the chart's: a
// DaemonSet's pods share one template, and the downward API gives a pod its
// node's name (the suffix) but no number of the node's.
func minorOffset(text, node string) (uint32, error) {
	if !strings.Contains(text, "=") {
		n, err := strconv.ParseUint(text, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("not a number")
		}
		return uint32(n), nil
	}
	for _, entry := range strings.Split(text, ",") {
		name, number, _ := strings.Cut(entry, "=")
		n, err := strconv.ParseUint(number, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("entry %q is not node=number", entry)
		}
		if name == node {
			return uint32(n), nil
		}
	}
	return 0, fmt.Errorf("no entry for this node, %s", node)
}
