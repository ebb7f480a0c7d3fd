package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/baton-dr/baton/sweep"
)

// gateFile is ci/gates.yaml.
type gateFile struct {
	Gates []gate `json:"gates"`
}

// gate is one sweep that gates a change.
type gate struct {
	Name      string `json:"name"`
	Bed       string `json:"bed"`
	Scenarios string `json:"scenarios"`
	FirstSeed uint64 `json:"firstSeed"`
	Seeds     int    `json:"seeds"`
	Chaos     bool   `json:"chaos"`
	Budget    string `json:"budget"`
}

func newCICommand() *cobra.Command {
	ci := &cobra.Command{Use: "ci", Short: "run what gates a change"}
	var file, out string
	gates := &cobra.Command{
		Use:   "gates [--file ci/gates.yaml]",
		Short: "run every gate of the gate file; fail with replay commands",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			var gf gateFile
			if err := yaml.UnmarshalStrict(data, &gf); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			var failed []string
			for i, g := range gf.Gates {
				if err := runGate(cmd, g, filepath.Join(out, fmt.Sprintf("gate-%d", i+1))); err != nil {
					fmt.Fprintf(cmd.OutOrStdout(), "GATE FAILED: %s: %v\n", g.Name, err)
					failed = append(failed, g.Name)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "gate passed: %s\n", g.Name)
			}
			if len(failed) > 0 {
				return fmt.Errorf("%d gates failed: %s", len(failed), strings.Join(failed, "; "))
			}
			return nil
		},
	}
	gates.Flags().StringVar(&file, "file", "ci/gates.yaml", "the gate file")
	gates.Flags().StringVar(&out, "out", "out/ci", "write each gate's report under this directory")
	ci.AddCommand(gates)
	return ci
}

func runGate(cmd *cobra.Command, g gate, out string) error {
	if g.Bed != "sim" {
		return fmt.Errorf("bed %q: only the simulation bed gates changes so far", g.Bed)
	}
	if err := wantSeeds("seeds", g.Seeds); err != nil {
		return err
	}
	budget, err := time.ParseDuration(g.Budget)
	if err != nil || budget <= 0 {
		return fmt.Errorf("budget %q: %v", g.Budget, err)
	}
	selected, err := selectScenarios(g.Scenarios)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "gate: %s (%d scenarios x %d seeds from %d, chaos %v, budget %s)\n",
		g.Name, len(selected), g.Seeds, g.FirstSeed, g.Chaos, budget)
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	progress := newProgress(cmd.ErrOrStderr())
	run := sweep.Run(ctx, sweep.Options{Scenarios: selected, FirstSeed: g.FirstSeed, Seeds: g.Seeds, Chaos: g.Chaos,
		Progress: progress.update})
	progress.finish()
	run.Name = "gate: " + g.Name
	err = summarise(cmd.OutOrStdout(), run, out)
	if want := len(selected) * g.Seeds; err == nil && len(run.Results) < want {
		return fmt.Errorf("only %d of %d runs fit the budget of %s", len(run.Results), want, budget)
	}
	return err
}
