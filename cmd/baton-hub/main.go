// Command baton-hub is baton's hub controller: it deploys site storage through Open Cluster Management.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/controllers/hub"
	viewv1beta1 "github.com/baton-dr/baton/controllers/hub/view/v1beta1"
	"github.com/baton-dr/baton/internal/command"
)

const usage = `Usage: baton-hub [flags]

The hub controller. For every StorageSiteDeployment it carries discovery,
sizing and approval to the managed site through one ManifestWork and reads the
site's draft, StorageCluster and StorageNodes back through ManagedClusterViews;
for every SiteTestFailover it carries a drill to the DR site the same way. It
never holds a site kubeconfig.

It runs on an Open Cluster Management hub: when the API server does not serve
work.open-cluster-management.io/v1 ManifestWorks, it registers no controller
and exits with status 1. Without view.open-cluster-management.io/v1beta1
ManagedClusterViews (stolostron's work-manager add-on) it delivers but cannot
read the sites back, and says so.

The server-side apply onto a site's draft runs as the field manager
` + hub.FieldManager + ` (OCM requires the work-agent prefix).

Environment:
  KUBECONFIG   the hub's kubeconfig when --kubeconfig is not given; without
               either, the in-cluster service account is used

Flags:
`

// options are the command's flags.
type options struct {
	kubeconfig              string
	serving                 command.Serving
	leaderElect             bool
	leaderElectionNamespace string
}

func parseFlags(args []string, output io.Writer) (options, error) {
	o := options{serving: command.Serving{Metrics: ":8080", Probes: ":8081"}}
	flags := command.NewFlagSet("baton-hub", usage, output)
	flags.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the hub's kubeconfig (default: $KUBECONFIG, else in-cluster)")
	o.serving.AddFlags(flags)
	flags.BoolVar(&o.leaderElect, "leader-elect", false, "elect one active hub controller among replicas (a Lease in --leader-election-namespace)")
	flags.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "baton-hub", "namespace of the leader-election Lease")
	return o, command.Parse(flags, args)
}

func main() { command.MainManager(run) }

// run is the whole command: 0 after a clean shutdown (ctx done), 1 when the
// hub cannot run, 2 for bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return command.RunManager(ctx, "baton-hub", args, stdout, stderr, parseFlags, serve)
}

// serve builds the manager, registers the hub's controllers and runs them
// until ctx is done.
func serve(ctx context.Context, o options, log logr.Logger) error {
	config, err := command.LoadKubeconfig(o.kubeconfig)
	if err != nil {
		return err
	}
	scheme, err := command.NewScheme(hub.AddToScheme)
	if err != nil {
		return err
	}
	// The manager caches only the hub's own works and views: a hub holds
	// many other controllers' ManifestWorks, which this one never reads.
	ours := labels.SelectorFromSet(labels.Set{hub.ManagedByLabel: hub.ManagedByValue})
	manager, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 o.serving.MetricsOptions(),
		HealthProbeBindAddress:  o.serving.ProbeAddress(),
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        "baton-hub.storage.baton.dev",
		LeaderElectionNamespace: o.leaderElectionNamespace,
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&workv1.ManifestWork{}:            {Label: ours},
			&viewv1beta1.ManagedClusterView{}: {Label: ours},
		}},
	})
	if err != nil {
		return fmt.Errorf("failed to create the manager: %w", err)
	}
	d, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return fmt.Errorf("failed to create the discovery client: %w", err)
	}
	registration, err := hub.Setup(manager, d)
	if err != nil {
		return err
	}
	if !registration.ManifestWorkServed {
		return errors.New("the API server does not serve work.open-cluster-management.io/v1 ManifestWorks: baton-hub runs on an Open Cluster Management hub")
	}
	if !registration.ViewsServed {
		log.Info("the API server does not serve view.open-cluster-management.io/v1beta1 ManagedClusterViews: requests are delivered but sites cannot be read back")
	}
	if err := command.AddProbes(manager); err != nil {
		return err
	}
	log.Info("baton-hub starts", "fieldManager", hub.FieldManager, "leaderElect", o.leaderElect)
	if err := manager.Start(ctx); err != nil {
		return fmt.Errorf("the manager stopped: %w", err)
	}
	return nil
}
