package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/baton-dr/baton/bed/real"
	"github.com/baton-dr/baton/bed/real/infra"
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
		"the sites' storage: btrfs (one node per site) or zfs-drbd (two storage nodes per site, DRBD between them; the host kernel needs zfs and DRBD 9); default $"+infra.StorageEnv+", else btrfs")
	up := infraCommand("up", "check the host, then create the bed's clusters (existing ones are kept) and wait until they are Ready; "+
		"a failure takes away what it made", cobra.NoArgs,
		func(_ *cobra.Command, in *infra.Infra, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return in.Up(ctx)
		})
	up.Flags().Bool("retain", false, "keep what a failed bring-up made, for inspection (default $"+infra.RetainEnv+"=1); make realbed-down takes it away")
	realbed.AddCommand(
		up,
		infraCommand("down", "delete the bed's clusters and network, release every loop device its sites attached; exit 1 naming what is left", cobra.NoArgs,
			func(_ *cobra.Command, in *infra.Infra, _ []string) error {
				return in.Down(context.Background())
			}),
		infraCommand("deploy IMAGE", "deploy baton (IMAGE, from ci/realbed/baton-image.sh) into both sites and register each as the other's peer (with OCM: site-b's peers once the hub deployed its storage, batonctl realbed peers)", cobra.ExactArgs(1),
			func(cmd *cobra.Command, in *infra.Infra, args []string) error {
				return in.Deploy(cmd.Context(), args[0])
			}),
		infraCommand("peers IMAGE", "once both sites run a storage cluster (site-b's deployed through the hub), register each as the other's peer", cobra.ExactArgs(1),
			func(cmd *cobra.Command, in *infra.Infra, args []string) error {
				return in.Peers(cmd.Context(), args[0])
			}),
		infraCommand("prove-replication", "replicate a claim of site A to site B and find its shipped snapshots in B's records", cobra.NoArgs,
			func(cmd *cobra.Command, in *infra.Infra, _ []string) error {
				what, err := in.ProveReplication(cmd.Context())
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), what)
				return nil
			}),
		infraCommand("heal", "remove every partition from the bed's nodes (a crashed scenario run's too)", cobra.NoArgs,
			// The Infra is made for its dockerd, which New points this process at.
			func(cmd *cobra.Command, _ *infra.Infra, _ []string) error {
				return real.Heal(cmd.Context())
			}),
		infraCommand("lacking", "print, in one line read off the host and the running clusters, what the real bed lacks", cobra.NoArgs,
			func(cmd *cobra.Command, in *infra.Infra, _ []string) error {
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
			}),
	)
	realbed.AddCommand(newRealbedOCMCommand())
	return realbed
}

// infraCommand is a realbed subcommand that runs on the bed's Infra, made
// from the command's flags before run is called.
func infraCommand(use, short string, args cobra.PositionalArgs, run func(cmd *cobra.Command, in *infra.Infra, args []string) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := newInfra(cmd)
			if err != nil {
				return err
			}
			return run(cmd, in, args)
		},
	}
}

// newInfra is the bed's Infra as the realbed command's flags shape it.
func newInfra(cmd *cobra.Command) (*infra.Infra, error) {
	in, err := openInfra(cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	if flag := cmd.Flag("storage"); flag != nil && flag.Changed {
		if in.Storage, err = infra.ParseStorageMode(flag.Value.String()); err != nil {
			return nil, fmt.Errorf("--storage: %w", err)
		}
	}
	if flag := cmd.Flags().Lookup("retain"); flag != nil && flag.Changed {
		in.Retain = flag.Value.String() == "true"
	}
	return in, nil
}

// openInfra is the real bed's Infra at its default paths, printing its
// progress to log.
func openInfra(log io.Writer) (*infra.Infra, error) {
	// controller-runtime's clients (the chart's install, the sites'
	// records) log through its logger; the bed prints its own progress.
	ctrllog.SetLogger(logr.Discard())
	paths, err := infra.DefaultPaths()
	if err != nil {
		return nil, err
	}
	return infra.New(paths, log)
}
