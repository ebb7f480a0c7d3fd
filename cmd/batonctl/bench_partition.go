package main

import (
	"fmt"
	"os"
	"os/exec"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/baton-dr/baton/bed/local"
)

// newBenchPartitionCommand times CSI calls on the surviving site of the
// local bed while the sites drop each other's packets (issue 13): a call that
// waits for the unreachable site shows the storage API's 10 s deadline.
func newBenchPartitionCommand() *cobra.Command {
	var volumes int
	var binaries string
	cmd := &cobra.Command{
		Use:   "partition",
		Short: "CreateVolume and forced fail-over p50/p99 on the local bed's surviving site, through its storage API and its CSI driver, while site<->site packets are dropped (needs root)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrllog.SetLogger(logr.Discard())
			if binaries == "" {
				dir, err := os.MkdirTemp("", "baton-bench-bin-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				build := exec.Command("go", "build", "-o", dir+"/", "./cmd/baton-controller", "./cmd/baton-node", "./cmd/baton-csi")
				if out, err := build.CombinedOutput(); err != nil {
					return fmt.Errorf("go build of the local bed's binaries (run from the checkout): %w: %s", err, out)
				}
				binaries = dir
			}
			// A loaded machine ships the setup's first snapshots slowly: the
			// setup may take long, the timed calls are what is measured.
			b, err := local.New(local.Options{Binaries: binaries, ActionLimit: 10 * time.Minute})
			if err != nil {
				return err
			}
			defer b.Close()
			calls, err := b.BenchPartitioned(volumes, 16<<20)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CALL ON site-b, site-a's packets dropped\tp50\tp99\tmax\tcalls")
			for _, row := range []struct {
				name  string
				times []time.Duration
			}{{"storage API CreateVolume (the site's answer)", calls.SiteCreate},
				{"storage API Failover(force) (the site's answer)", calls.SiteFailover},
				{"CSI CreateVolume", calls.Create}, {"csi-addons PromoteVolume(force)", calls.Promote},
				{"csi-addons PromoteVolume(force) again (the driver's chain resolution alone)", calls.PromoteAgain}} {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\n", row.name, percentile(row.times, 0.5).Round(time.Millisecond),
					percentile(row.times, 0.99).Round(time.Millisecond), percentile(row.times, 1).Round(time.Millisecond), len(row.times))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, e := range calls.Errors {
				fmt.Fprintln(cmd.OutOrStdout(), "error:", e)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&volumes, "volumes", 10, "calls of each kind: twice as many volumes are protected on site-a, then failed over on site-b")
	cmd.Flags().StringVar(&binaries, "bin", "", "directory of prebuilt baton-controller, baton-node and baton-csi (default: go build them)")
	return cmd
}
