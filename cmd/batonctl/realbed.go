package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/baton-dr/baton/bed/real"
	"github.com/baton-dr/baton/scenarios"
)

func newRealbedCommand() *cobra.Command {
	realbed := &cobra.Command{
		Use:   "realbed",
		Short: "bring the real bed's kind clusters up, or take everything it made down (root)",
		Long: `realbed drives the real bed's infrastructure through kind's Go API on the
private dockerd of ci/realbed (make realbed builds what it needs first; see
docs/realbed.md): a hub and two sites, each on its own pod and service
ranges, on the docker network baton-realbed.`,
	}
	realbed.PersistentFlags().String("storage", "",
		"the sites' storage: btrfs (one node per site) or zfs-drbd (two storage nodes per site, DRBD between them; the host kernel needs zfs and DRBD 9); default $"+real.StorageEnv+", else btrfs")
	realbed.AddCommand(&cobra.Command{
		Use:   "up",
		Short: "check the host, then create the bed's clusters (existing ones are kept) and wait until they are Ready",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := newInfra(cmd)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return in.Up(ctx)
		},
	}, &cobra.Command{
		Use:   "down",
		Short: "delete the bed's clusters and network, release every loop device its sites attached; exit 1 naming what is left",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := newInfra(cmd)
			if err != nil {
				return err
			}
			return in.Down(context.Background())
		},
	}, &cobra.Command{
		Use:   "deploy IMAGE",
		Short: "deploy baton (IMAGE, from ci/realbed/baton-image.sh) into both sites and register each as the other's peer (with OCM: site-b's peers once the hub deployed its storage, batonctl realbed peers)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := newInfra(cmd)
			if err != nil {
				return err
			}
			return in.Deploy(cmd.Context(), args[0])
		},
	}, &cobra.Command{
		Use:   "peers IMAGE",
		Short: "once both sites run a storage cluster (site-b's deployed through the hub), register each as the other's peer",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := newInfra(cmd)
			if err != nil {
				return err
			}
			return in.Peers(cmd.Context(), args[0])
		},
	}, &cobra.Command{
		Use:   "prove-replication",
		Short: "replicate a claim of site A to site B and find its shipped snapshots in B's records",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := newInfra(cmd)
			if err != nil {
				return err
			}
			what, err := in.ProveReplication(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), what)
			return nil
		},
	}, &cobra.Command{
		Use:   "heal",
		Short: "remove every partition from the bed's nodes (a crashed scenario run's too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := newInfra(cmd)
			if err != nil {
				return err
			}
			return in.Heal(cmd.Context())
		},
	}, &cobra.Command{
		Use:   "lacking",
		Short: "print, in one line read off the host and the running clusters, what the real bed lacks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := newInfra(cmd)
			if err != nil {
				return err
			}
			facts, err := in.ReadFacts(cmd.Context())
			if err != nil {
				return err
			}
			facts.Scenarios = realLacking(scenarios.Catalogue())
			lacking := facts.Lacking()
			if lacking == "" {
				lacking = "nothing"
			}
			fmt.Fprintln(cmd.OutOrStdout(), "lacking:", lacking)
			return nil
		},
	})
	realbed.AddCommand(newRealbedOCMCommand())
	return realbed
}

func newInfra(cmd *cobra.Command) (*real.Infra, error) {
	// controller-runtime's clients (the chart's install, the sites'
	// records) log through its logger; the bed prints its own progress.
	ctrllog.SetLogger(logr.Discard())
	paths, err := real.DefaultPaths()
	if err != nil {
		return nil, err
	}
	in, err := real.NewInfra(paths, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	if flag := cmd.Flag("storage"); flag != nil && flag.Changed {
		if in.Storage, err = real.ParseStorageMode(flag.Value.String()); err != nil {
			return nil, fmt.Errorf("--storage: %w", err)
		}
	}
	return in, nil
}
