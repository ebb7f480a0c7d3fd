// Command baton-view-agent answers a managed cluster's ManagedClusterViews: the smallest view agent baton's hub needs where stolostron's work-manager add-on cannot be had.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
	"github.com/baton-dr/baton/controllers/hub/viewagent"
)

const usage = `Usage: baton-view-agent --hub-kubeconfig FILE --cluster-name NAME [flags]

The view agent of a managed cluster. It watches the ManagedClusterViews
(view.open-cluster-management.io/v1beta1) in the cluster's namespace on the
hub, reads the one object each view names from this cluster, and writes it
into the view's status with a Processing condition, or the reason it could not
be read; again every updateIntervalSeconds of the view (default 30).

It stands in for the view agent of stolostron's work-manager add-on, which
cannot be had here; it writes the same status. It reads the hub as the
klusterlet does (the hub kubeconfig the registration agent keeps), and this
cluster as its own service account: what that account may not get, its views
report as refused.

Environment:
  KUBECONFIG   this cluster's kubeconfig when --kubeconfig is not given;
               without either, the in-cluster service account is used

Flags:
`

type options struct {
	hubKubeconfig  string
	clusterName    string
	kubeconfig     string
	metricsAddress string
	probeAddress   string
}

func parseFlags(args []string, output io.Writer) (options, error) {
	var o options
	flags := flag.NewFlagSet("baton-view-agent", flag.ContinueOnError)
	flags.SetOutput(output)
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), usage)
		flags.PrintDefaults()
	}
	flags.StringVar(&o.hubKubeconfig, "hub-kubeconfig", "", "the hub's kubeconfig, as the registration agent writes it (required)")
	flags.StringVar(&o.clusterName, "cluster-name", "", "this cluster's name on the hub: the namespace its views live in (required)")
	flags.StringVar(&o.kubeconfig, "kubeconfig", "", "this cluster's kubeconfig (default: $KUBECONFIG, else in-cluster)")
	flags.StringVar(&o.metricsAddress, "metrics-bind-address", "0", `address of the Prometheus metrics endpoint; "0" turns it off`)
	flags.StringVar(&o.probeAddress, "health-probe-bind-address", ":8081", `address of /healthz and /readyz; "0" turns them off`)
	if err := flags.Parse(args); err != nil {
		return o, err
	}
	if flags.NArg() > 0 {
		flags.Usage()
		return o, fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	if o.hubKubeconfig == "" || o.clusterName == "" {
		return o, errors.New("--hub-kubeconfig and --cluster-name are required")
	}
	return o, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command: 0 after a clean shutdown, 1 when the agent
// cannot run, 2 for bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "baton-view-agent:", err)
		return 2
	}
	log := logr.FromSlogHandler(slog.NewJSONHandler(stderr, nil))
	ctrl.SetLogger(log)
	if err := serve(ctx, o, log); err != nil {
		log.Error(err, "baton-view-agent stops")
		return 1
	}
	return 0
}

func serve(ctx context.Context, o options, log logr.Logger) error {
	hubConfig, err := clientcmd.BuildConfigFromFlags("", o.hubKubeconfig)
	if err != nil {
		return fmt.Errorf("failed to load the hub kubeconfig %s: %w", o.hubKubeconfig, err)
	}
	siteConfig, err := loadConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("failed to build the scheme: %w", err)
	}
	if err := viewv1beta1.AddToScheme(scheme); err != nil {
		return fmt.Errorf("failed to build the scheme: %w", err)
	}
	// The cache watches the cluster's namespace alone: the agent's identity
	// on the hub may read no other.
	manager, err := ctrl.NewManager(hubConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: o.metricsAddress},
		HealthProbeBindAddress: o.probeAddress,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{o.clusterName: {}}},
	})
	if err != nil {
		return fmt.Errorf("failed to create the manager: %w", err)
	}
	site, err := client.New(siteConfig, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("failed to reach this cluster's API server: %w", err)
	}
	agent := &viewagent.Reconciler{Hub: manager.GetClient(), Site: site, Mapper: site.RESTMapper()}
	if err := agent.SetupWithManager(manager); err != nil {
		return fmt.Errorf("failed to register the view agent: %w", err)
	}
	if err := manager.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("failed to add the health check: %w", err)
	}
	if err := manager.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("failed to add the readiness check: %w", err)
	}
	log.Info("baton-view-agent starts", "cluster", o.clusterName, "hub", hubConfig.Host)
	if err := manager.Start(ctx); err != nil {
		return fmt.Errorf("the manager stopped: %w", err)
	}
	return nil
}

// loadConfig reads the kubeconfig flag, else $KUBECONFIG, else the
// in-cluster service account.
func loadConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	if kubeconfig == "" {
		config, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig, no $KUBECONFIG, and not in a cluster: %w", err)
		}
		return config, nil
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("failed to load the kubeconfig %s: %w", kubeconfig, err)
	}
	return config, nil
}
