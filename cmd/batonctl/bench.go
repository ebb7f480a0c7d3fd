package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/scenarios"
	simzfs "github.com/baton-dr/baton/sim/zfs"
	"github.com/baton-dr/baton/storage/backend"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/sweep"
)

// newBenchCommand prints the compass figures in one table; they need nothing
// but this process (the CSI latencies go through a unix socket it serves).
func newBenchCommand() *cobra.Command {
	var seeds, rpcRounds int
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "print baton's compass figures: simulation speed, delta sizes, chain resolution, bed start-up",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "FIGURE\tVALUE\tHOW")
			for _, name := range []string{"wordpress/failover", "gitea/failover"} {
				perMinute, compression, err := simSpeed(name, seeds)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "sim seeds/min, %s\t%.0f\t%d seeds, %d workers\n", name, perMinute, seeds, runtime.NumCPU())
				fmt.Fprintf(tw, "sim time compression, %s\t%.0fx\tsimulated seconds per wall second per worker\n", name, compression)
			}
			shipped, changed, err := deltaRatio()
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "incremental send, 1%% of 1 GiB changed\t%.4f\t%d bytes shipped / %d bytes changed\n",
				float64(shipped)/float64(changed), shipped, changed)
			fmt.Fprintf(tw, "chain resolution, 256 hops\t%s\tchain.Resolve, in memory\n", resolveTime())
			latencies, err := csiLatencies(rpcRounds)
			if err != nil {
				return fmt.Errorf("CSI latencies: %w", err)
			}
			for _, rpc := range []string{"Probe", "CreateVolume", "ValidateVolumeCapabilities", "GetCapacity", "DeleteVolume"} {
				d := latencies[rpc]
				fmt.Fprintf(tw, "CSI %s p50 / p99\t%s / %s\tgRPC on a unix socket, %d calls, simulated site behind it\n",
					rpc, percentile(d, 0.5).Round(time.Microsecond), percentile(d, 0.99).Round(time.Microsecond), len(d))
			}
			for _, row := range bedStartUps() {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", row.bed, row.value, row.how)
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(newBenchPartitionCommand())
	cmd.Flags().IntVar(&seeds, "seeds", 20, "seeds of each fail-over story to time")
	cmd.Flags().IntVar(&rpcRounds, "rpc-rounds", 200, "rounds of CSI calls to time")
	return cmd
}

func simSpeed(name string, seeds int) (perMinute, compression float64, err error) {
	sc, err := scenarios.Find(name)
	if err != nil {
		return 0, 0, err
	}
	run := sweep.Run(context.Background(), sweep.Options{Scenarios: []scenarios.Scenario{sc}, FirstSeed: 1, Seeds: seeds})
	var simulated time.Duration
	for _, r := range run.Results {
		if r.Verdict != reports.Passed {
			return 0, 0, fmt.Errorf("%s seed %d failed while benchmarking: replay with %s", name, r.Seed, r.Replay)
		}
		simulated += r.Duration
	}
	workers := float64(runtime.NumCPU())
	return float64(len(run.Results)) / run.Duration.Minutes(), simulated.Seconds() / run.Duration.Seconds() / workers, nil
}

// deltaRatio writes 1% of a 1 GiB simulated volume's blocks after a snapshot
// and measures the incremental stream against the bytes changed.
func deltaRatio() (shipped, changed uint64, err error) {
	const sizeBytes, blockBytes = 1 << 30, 4096
	pool := simzfs.New(simzfs.Options{SizeBytes: 4 << 30, BlockSizeBytes: blockBytes, Seed: 1})
	if err := pool.CreateVolume("v", sizeBytes, backend.Thin); err != nil {
		return 0, 0, err
	}
	if err := pool.Snapshot("v", "a"); err != nil {
		return 0, 0, err
	}
	d, err := pool.Open("v")
	if err != nil {
		return 0, 0, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, blockBytes)
	written := map[int64]bool{}
	for len(written) < sizeBytes/blockBytes/100 {
		i := rng.Int64N(sizeBytes / blockBytes)
		for j := range block {
			block[j] = byte(rng.Uint32())
		}
		if _, err := d.WriteAt(block, i*blockBytes); err != nil {
			return 0, 0, err
		}
		written[i] = true
	}
	if err := d.Close(); err != nil {
		return 0, 0, err
	}
	if err := pool.Snapshot("v", "b"); err != nil {
		return 0, 0, err
	}
	stream, err := pool.Send("v", "a", "b")
	if err != nil {
		return 0, 0, err
	}
	defer stream.Close()
	return stream.(*simzfs.Stream).Len(), uint64(len(written)) * blockBytes, nil
}

func resolveTime() time.Duration {
	const cluster, other = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
	records := map[chain.ClusterID][]chain.Member{}
	ref := func(i int) chain.Ref {
		c := chain.ClusterID(cluster)
		if i%2 == 1 {
			c = other
		}
		return chain.Ref{Cluster: c, Volume: chain.VolumeID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))}
	}
	for i := 0; i <= 256; i++ {
		m := chain.Member{Ref: ref(i), Root: ref(0), Generation: uint32(i), State: chain.Tombstone}
		if i > 0 {
			m.Predecessor = ref(i - 1)
		}
		if i < 256 {
			m.Successor = ref(i + 1)
		} else {
			m.State = chain.Active
		}
		records[m.Ref.Cluster] = append(records[m.Ref.Cluster], m)
	}
	directory := memoryDirectory(records)
	const rounds = 200
	start := time.Now()
	for range rounds {
		if _, err := chain.Resolve(directory, []chain.ClusterID{cluster, other}, ref(0)); err != nil {
			return 0
		}
	}
	return time.Since(start) / rounds
}

type memoryDirectory map[chain.ClusterID][]chain.Member

func (d memoryDirectory) Members(c chain.ClusterID, _ chain.Ref) ([]chain.Member, error) {
	return d[c], nil
}
