// Command batonctl is the command line of baton: it runs the simulation and the
// beds, reads a site's storage objects, walks volume chains, calls CSI and
// replication RPCs by hand, and prints benchmarks.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
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
	}
	root.AddCommand(newVersionCommand(), newCSICommand(), newSimCommand(), newChaosCommand(), newCICommand(), newBenchCommand(), newGetCommand(env), newChainCommand(env), newScenarioCommand(), newRealbedCommand())
	return root
}
