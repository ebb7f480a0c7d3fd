package main

import (
	"fmt"
	"io"
	"time"

	"github.com/baton-dr/baton/internal/command"

	"github.com/baton-dr/baton/storage/chain"
)

// options are the operator's configuration, all from flags (no hidden
// defaults: --help prints every one).
type options struct {
	kubeconfig         string
	namespace          string
	clusterID          string
	leaderElect        bool
	leaderElectionID   string
	serving            command.Serving
	storageAPIAddress  string
	storageAPIEndpoint string
	tlsSecret          string
	csiSecret          string
	peersSecret        string
	csiDriver          string
	peerCAFile         string
	discoveryFile      string
	tickInterval       time.Duration
	logLevel           int
}

func parseFlags(args []string, output io.Writer) (options, error) {
	var o options
	flags := command.NewFlagSet("baton-controller", usage, output)
	flags.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file; empty uses $KUBECONFIG, then the in-cluster config, then ~/.kube/config")
	flags.StringVar(&o.namespace, "namespace", "baton-system", "namespace of the site's storage objects, the lease and the CSI secret")
	flags.StringVar(&o.clusterID, "cluster-id", "", "UUID of the StorageCluster to run; empty runs the namespace's only one")
	flags.BoolVar(&o.leaderElect, "leader-elect", true, "take a lease before ticking, reconciling and serving (one active operator per site)")
	flags.StringVar(&o.leaderElectionID, "leader-election-id", "baton-controller", "name of the leader-election lease")
	o.serving = command.Serving{Metrics: ":8080", Probes: ":8081"}
	o.serving.AddFlags(flags)
	flags.StringVar(&o.storageAPIAddress, "storage-api-address", ":8443", "address the storage API listens on (HTTPS); 0 disables it")
	flags.StringVar(&o.storageAPIEndpoint, "storage-api-endpoint", "",
		"https URL peers and the CSI driver reach the storage API at; empty is https://baton-controller.<namespace>.svc<port of --storage-api-address>")
	flags.StringVar(&o.tlsSecret, "tls-secret", "baton-controller-tls", "kubernetes.io/tls Secret in --namespace with the storage API's certificate")
	flags.StringVar(&o.csiSecret, "csi-secret", "baton-csi", "Secret in --namespace whose \"clusters\" key the CSI driver reads")
	flags.StringVar(&o.peersSecret, "peers-secret", "",
		"Secret in --namespace whose \"clusters\" key lists peer sites' clusters to register in the CSI secret (local=false); empty registers none")
	flags.StringVar(&o.peerCAFile, "peer-ca-file", "",
		"PEM bundle of the CAs that sign peer sites' storage API certificates; empty trusts the system roots")
	flags.StringVar(&o.csiDriver, "csi-driver", "csi.baton.dev", "CSI driver name of the site's volumes (TestFailover bubbles name it)")
	flags.StringVar(&o.discoveryFile, "discovery-file", "",
		"JSON list of the nodes' candidate devices that OperatorOps runs read (the beds); empty: runs fail until node-agent discovery lands")
	flags.DurationVar(&o.tickInterval, "tick-interval", time.Second, "how often the storage core's time-driven work runs")
	flags.IntVar(&o.logLevel, "v", 0, "log verbosity (0 info, 1 debug)")
	if err := command.Parse(flags, args); err != nil {
		return o, err
	}
	return o, o.validate(output)
}

func (o *options) validate(output io.Writer) error {
	var problems []string
	if o.clusterID != "" && !chain.IsUUID(o.clusterID) {
		problems = append(problems, fmt.Sprintf("--cluster-id %q is not a lower-case UUID", o.clusterID))
	}
	if o.namespace == "" {
		problems = append(problems, "--namespace is empty")
	}
	if o.tickInterval <= 0 {
		problems = append(problems, fmt.Sprintf("--tick-interval %s is not positive", o.tickInterval))
	}
	return command.Problems(output, "baton-controller", problems)
}
