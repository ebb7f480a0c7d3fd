// Command batonctl is the command line of baton: it runs the simulation and the
// beds, reads a site's storage objects, walks volume chains, calls CSI and
// replication RPCs by hand, and prints benchmarks.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dr/baton/internal/command"
)

func main() {
	if err := newRootCommand(environment{now: time.Now}).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "batonctl:", err)
		os.Exit(1)
	}
}

func newRootCommand(env environment) *cobra.Command {
	root := &cobra.Command{
		Use:   "batonctl",
		Short: "batonctl drives baton: simulation, beds, chains, CSI calls, benchmarks",
		Long: `batonctl is the command line of baton, a multi-site disaster-recovery
block-storage stack for Kubernetes and the test bed that proves it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// A seeded-bug selection this batonctl cannot honour (BATON_BUG) is
		// refused before any command runs.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return command.SeededBugs("batonctl", cmd.ErrOrStderr())
		},
	}
	root.AddCommand(newVersionCommand(), newCSICommand(), newSimCommand(), newChaosCommand(), newCICommand(), newBenchCommand(), newGetCommand(env), newChainCommand(env), newScenarioCommand(), newRealbedCommand(), newBugsCommand(), newMutantsCommand())
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command group (a command with
// subcommands and nothing to run of its own) fail on an argument that names
// none of its subcommands. Cobra itself does so only at the root: below it,
// "batonctl sim frobnicate" would print sim's help and exit 0, and a CI step
// with a typo would pass having run nothing.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("unknown command %q for %q; %q lists its commands", args[0], cmd.CommandPath(), cmd.CommandPath()+" --help")
		}
		return cmd.Help()
	}
}
