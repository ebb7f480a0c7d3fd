package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/baton-dr/baton/bed/real/infra"
	"github.com/baton-dr/baton/bed/real/ocm"
)

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
			if images.OCM == "" || images.Baton == "" {
				return errors.New("--ocm-image and --baton-image are required")
			}
			return in.InstallOCM(ctx, images)
		})
	install.Flags().StringVar(&images.OCM, "ocm-image", "", "OCM's image (ci/realbed/ocm-image.sh prints it)")
	install.Flags().StringVar(&images.Baton, "baton-image", "", "baton's image (make images prints it)")
	deploy := infraCommand("deploy-storage SITE", "deploy SITE's storage (site-a or site-b) from the hub through OCM, approve the draft, wait until Online", cobra.ExactArgs(1),
		func(cmd *cobra.Command, in *infra.Infra, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			deployed, err := in.DeployStorage(ctx, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), deployed)
			return nil
		})
	command.AddCommand(install, deploy)
	return command
}
