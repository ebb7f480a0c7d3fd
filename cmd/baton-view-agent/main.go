// Command baton-view-agent answers a managed cluster's ManagedClusterViews: the smallest view agent baton's hub needs where stolostron's work-manager add-on cannot be had.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
	"github.com/baton-dr/baton/controllers/hub/viewagent"
	"github.com/baton-dr/baton/internal/command"
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
	hubKubeconfig string
	clusterName   string
	kubeconfig    string
	serving       command.Serving
}

func parseFlags(args []string, output io.Writer) (options, error) {
	o := options{serving: command.Serving{Metrics: "0", Probes: ":8081"}}
	flags := command.NewFlagSet("baton-view-agent", usage, output)
	flags.StringVar(&o.hubKubeconfig, "hub-kubeconfig", "", "the hub's kubeconfig, as the registration agent writes it (required)")
	flags.StringVar(&o.clusterName, "cluster-name", "", "this cluster's name on the hub: the namespace its views live in (required)")
	flags.StringVar(&o.kubeconfig, "kubeconfig", "", "this cluster's kubeconfig (default: $KUBECONFIG, else in-cluster)")
	o.serving.AddFlags(flags)
	if err := command.Parse(flags, args); err != nil {
		return o, err
	}
	if o.hubKubeconfig == "" || o.clusterName == "" {
		return o, errors.New("--hub-kubeconfig and --cluster-name are required")
	}
	return o, nil
}

func main() { command.MainManager(run) }

// run is the whole command: 0 after a clean shutdown, 1 when the agent
// cannot run, 2 for bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return command.RunManager(ctx, "baton-view-agent", args, stdout, stderr, parseFlags, serve)
}

func serve(ctx context.Context, o options, log logr.Logger) error {
	hubConfig, err := clientcmd.BuildConfigFromFlags("", o.hubKubeconfig)
	if err != nil {
		return fmt.Errorf("failed to load the hub kubeconfig %s: %w", o.hubKubeconfig, err)
	}
	siteConfig, err := command.LoadKubeconfig(o.kubeconfig)
	if err != nil {
		return err
	}
	scheme, err := command.NewScheme(viewv1beta1.AddToScheme)
	if err != nil {
		return err
	}
	// The cache watches the cluster's namespace alone: the agent's identity
	// on the hub may read no other.
	manager, err := ctrl.NewManager(hubConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                o.serving.MetricsOptions(),
		HealthProbeBindAddress: o.serving.ProbeAddress(),
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
	if err := command.AddProbes(manager); err != nil {
		return err
	}
	log.Info("baton-view-agent starts", "cluster", o.clusterName, "hub", hubConfig.Host)
	if err := manager.Start(ctx); err != nil {
		return fmt.Errorf("the manager stopped: %w", err)
	}
	return nil
}
