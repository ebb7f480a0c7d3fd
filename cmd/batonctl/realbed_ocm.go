package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/baton-dr/baton/bed/real/infra"
	"github.com/baton-dr/baton/bed/real/ocm"
	"github.com/baton-dr/baton/internal/steplog"
)

// siteNamespace is baton's namespace on the bed's sites.
const siteNamespace = "baton-system"

func newRealbedOCMCommand() *cobra.Command {
	command := &cobra.Command{
		Use:   "ocm",
		Short: "Open Cluster Management on the bed: the hub and its agents, and a site's storage deployed through it",
		Long: `ocm puts OCM v1.0.0 (ci/realbed/ocm-image.sh builds its image) on the running bed:
the registration controller and baton-hub on baton-hub, the klusterlet's
registration and work agents and baton's view agent on each site, both sites
accepted (see docs/realbed.md). deploy-storage then deploys a site's storage
through the hub: a StorageSiteDeployment, the site's draft reviewed, approved,
and followed until the storage cluster is Online.`,
	}
	var images ocm.Images
	install := infraCommand("install", "install OCM and baton-hub on the hub, join and accept both sites; every step printed with its time", cobra.NoArgs,
		func(cmd *cobra.Command, in *infra.Infra, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return newOCMBed(cmd, in).install(ctx, images)
		})
	install.Flags().StringVar(&images.OCM, "ocm-image", "", "OCM's image (ci/realbed/ocm-image.sh prints it)")
	install.Flags().StringVar(&images.Baton, "baton-image", "", "baton's image (make images prints it)")
	deploy := infraCommand("deploy-storage SITE", "deploy SITE's storage (site-a or site-b) from the hub through OCM, approve the draft, wait until Online", cobra.ExactArgs(1),
		func(cmd *cobra.Command, in *infra.Infra, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return newOCMBed(cmd, in).deployStorage(ctx, cmd, args[0])
		})
	command.AddCommand(install, deploy)
	return command
}

// ocmBed is the running bed's clusters, as bed/real/ocm reaches them.
type ocmBed struct {
	infra *infra.Infra
	p     *steplog.Log
}

func newOCMBed(cmd *cobra.Command, in *infra.Infra) *ocmBed {
	return &ocmBed{infra: in, p: ocm.NewProgress(cmd.ErrOrStderr())}
}

func (b *ocmBed) cluster(c infra.Cluster) (ocm.Cluster, error) {
	config, err := clientcmd.BuildConfigFromFlags("", b.infra.Paths.Kubeconfig(c.Name))
	if err != nil {
		return ocm.Cluster{}, fmt.Errorf("%s: its kubeconfig (batonctl realbed up writes it): %w", c.Name, err)
	}
	return ocm.Cluster{Name: c.Name, Config: config}, nil
}

func (b *ocmBed) install(ctx context.Context, images ocm.Images) error {
	if images.OCM == "" || images.Baton == "" {
		return errors.New("--ocm-image and --baton-image are required")
	}
	moduleDir, err := ocm.ModuleDir(ctx)
	if err != nil {
		return err
	}
	hub, err := b.cluster(infra.Hub)
	if err != nil {
		return err
	}
	for _, c := range infra.Clusters() {
		if err := b.p.Step(c.Name+": images", func() (string, error) { return ocm.LoadImages(ctx, c.Name, images.OCM, images.Baton) }); err != nil {
			return err
		}
	}
	if err := ocm.Install(ctx, b.p, moduleDir, hub, images); err != nil {
		return err
	}
	address, err := ocm.NodeAddress(ctx, infra.Hub.Node(), infra.KindNetwork)
	if err != nil {
		return err
	}
	for _, c := range infra.Sites() {
		site, err := b.cluster(c)
		if err != nil {
			return err
		}
		if err := ocm.Join(ctx, b.p, moduleDir, hub, ocm.HubServer(address), ocm.Site{Cluster: site, ManagedCluster: c.Site, Namespace: siteNamespace}, images); err != nil {
			return err
		}
	}
	return nil
}

func (b *ocmBed) deployStorage(ctx context.Context, cmd *cobra.Command, name string) error {
	var site *infra.Cluster
	for _, c := range infra.Sites() {
		if c.Site == name {
			site = &c
		}
	}
	if site == nil {
		return fmt.Errorf("no site %q on the bed: site-a or site-b", name)
	}
	hub, err := b.cluster(infra.Hub)
	if err != nil {
		return err
	}
	d, err := ocm.DeployStorage(ctx, b.p, hub, ocm.Request(name+"-storage", name, siteNamespace, name, []string{site.Node()},
		infra.ReplicationInterval))
	if err != nil {
		return err
	}
	c := d.Last().Status.Cluster
	fmt.Fprintf(cmd.OutOrStdout(), "%s: storage cluster %s (%s), pool %s, nodes %v; %s\n", name, c.Name, c.ClusterID, c.Pool, c.Nodes,
		ocm.Transitions(d.Seen()))
	return nil
}
