package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-dr/baton/internal/mutants"
)

// drTargets are the DR logic issue 33 names: the storage core, chains,
// replication and placement, csi's resolution and replication service, and
// the node agent's reconcile.
var drTargets = []string{
	"storage/chain", "storage/core", "storage/replication", "storage/placement",
	"csi:resolve.go,replication.go", "node/agent:reconcile.go",
}

func newMutantsCommand() *cobra.Command {
	var (
		gremlins, out, cacheDir, equivalents string
		plan                                 = mutants.SweepPlan{Scenarios: "all", Chaos: true}
		bounds                               mutants.Bounds
		jobs                                 int
		unitOnly                             bool
	)
	c := &cobra.Command{
		Use:   "mutants --gremlins PATH [TARGET...]",
		Short: "mutate the DR logic and judge each mutant by its package's tests and by a sweep",
		Long: `mutants swaps one operator at a time (gremlins' mutations) in each TARGET
-- a package directory, or "dir:file,file" for some of its files; the DR
logic by default -- and judges each mutant twice: by the package's own tests
(go test, the mutated file overlaid) and by a sweep run with batonctl built
from the mutated tree, stopping at its first failure. A judge that runs past
its bound kills the mutant. Verdicts are cached by the mutated file's hash:
a kill is kept, a survival only while the rest of the tree is unchanged.
docs/mutants.md says how to read the report and lists the equivalent mutants.
Run it from the module's root; make mutants builds gremlins and runs it.`,
		Example: `  make mutants MUTANTS=storage/chain
  batonctl mutants --gremlins ~/.cache/baton/mutants/bin/gremlins storage/core csi:replication.go
  make mutants MUTANTS=storage/core:resync.go,drill.go MUTANT_FLAGS=--unit-only`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if gremlins == "" {
				return fmt.Errorf("--gremlins: the gremlins binary is needed to find the mutants (ci/mutants/gremlins.sh builds it)")
			}
			if err := wantSeeds("--seeds", plan.Seeds); err != nil {
				return err
			}
			if len(args) == 0 {
				args = drTargets
			}
			var targets []mutants.Target
			for _, a := range args {
				t, err := mutants.ParseTarget(a)
				if err != nil {
					return err
				}
				targets = append(targets, t)
			}
			excused := map[string]string{}
			if equivalents != "" {
				doc, err := os.ReadFile(equivalents)
				if err != nil {
					return err
				}
				if excused, err = mutants.ParseEquivalents(string(doc)); err != nil {
					return fmt.Errorf("%s: %w", equivalents, err)
				}
			}
			root, err := os.Getwd()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rep, err := mutants.Run(ctx, &mutants.Runner{Root: root}, mutants.Options{
				Gremlins: gremlins, Targets: targets, Plan: plan, Bounds: bounds, Jobs: jobs, UnitOnly: unitOnly,
				Cache: mutants.Cache{Dir: cacheDir}, Equivalent: excused, Log: cmd.ErrOrStderr(),
				Written: func(rep mutants.Report) error { return mutants.Write(out, rep) },
			})
			if perr := mutants.Print(cmd.OutOrStdout(), rep); perr != nil && err == nil {
				err = perr
			}
			if err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "results.json and report.txt are in %s\n", out)
			}
			return err
		},
	}
	cache, _ := os.UserCacheDir()
	c.Flags().StringVar(&gremlins, "gremlins", "", "the gremlins binary (ci/mutants/gremlins.sh prints its path)")
	c.Flags().StringVar(&out, "out", "out/mutants", "write results.json and report.txt into this directory")
	c.Flags().StringVar(&cacheDir, "cache", filepath.Join(cache, "baton", "mutants"), "keep verdicts here (empty: judge every mutant afresh)")
	c.Flags().StringVar(&equivalents, "equivalents", "docs/mutants.md", "the document listing the equivalent mutants")
	c.Flags().StringVar(&plan.Scenarios, "scenarios", plan.Scenarios, "the sweep's scenarios")
	c.Flags().IntVar(&plan.Seeds, "seeds", 2, "the sweep's seeds per scenario")
	c.Flags().BoolVar(&plan.Chaos, "chaos", plan.Chaos, "the sweep injects faults (--chaos)")
	c.Flags().IntVar(&plan.Workers, "workers", 0, "the sweep's parallel runs (default: the number of CPUs)")
	c.Flags().IntVar(&jobs, "jobs", 1, "mutants judged at once")
	c.Flags().BoolVar(&unitOnly, "unit-only", false, "judge by the packages' tests alone: no sweep, no batonctl built per mutant")
	c.Flags().DurationVar(&bounds.Test, "test-timeout", 5*time.Minute, "bound on a package's tests per mutant (go test -timeout)")
	c.Flags().DurationVar(&bounds.Build, "build-timeout", 10*time.Minute, "bound on a build per mutant")
	c.Flags().DurationVar(&bounds.Sweep, "sweep-timeout", 5*time.Minute, "bound on the sweep per mutant")
	return c
}
