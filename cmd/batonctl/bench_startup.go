package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/baton-dr/baton/bed/controlplane"
	"github.com/baton-dr/baton/bed/local"
	bedsim "github.com/baton-dr/baton/bed/sim"
)

// startUpRuns is how many start-ups each bed's figure is the median of.
const startUpRuns = 5

// startUpRow is one line of the bed start-up figures.
type startUpRow struct {
	bed, value, how string
}

// bedStartUps times each bed from nothing to ready, wall clock, the median of
// a few start-ups: the simulation bed until both sites can place a volume on
// two nodes, the test control plane until its API server serves, the local
// bed until every site serves volumes. The real bed needs root and minutes
// (kind clusters in a private dockerd); its row says where its figures are.
func bedStartUps() []startUpRow {
	var rows []startUpRow
	for _, records := range []struct {
		name    string
		records bedsim.Records
	}{{"memory records", bedsim.MemoryRecords}, {"CRD records and the hub", bedsim.CRDRecords}} {
		d, err := median(startUpRuns, func() error { return simBedReady(records.records) })
		rows = append(rows, startUpRow{"sim bed start-up, " + records.name, figure(d, err),
			fmt.Sprintf("wall time to both sites ready (a volume placeable on two nodes), median of %d", startUpRuns)})
	}
	const controlPlaneRuns = 3
	d, err := median(controlPlaneRuns, controlPlaneServes)
	rows = append(rows, startUpRow{"test control plane start-up", figure(d, err),
		fmt.Sprintf("kube-apiserver and etcd (bed/controlplane) until serving, median of %d", controlPlaneRuns)})
	const localRuns = 3
	d, err = localBedReady(localRuns)
	rows = append(rows, startUpRow{"local bed start-up", figure(d, err),
		fmt.Sprintf("bed/local.New until every site serves volumes (API servers, operators, agents, CSI), binaries prebuilt, median of %d", localRuns)},
		startUpRow{"real bed start-up", "not benched", "make realbed prints its own time; figures in docs/realbed.md"})
	return rows
}

// localBedReady builds the local bed's binaries once, then times its
// start-ups: New returns once every site serves volumes.
func localBedReady(runs int) (time.Duration, error) {
	// The bed's clients log through controller-runtime, which warns with a
	// stack on stderr when no logger is set; the bench prints figures only.
	ctrllog.SetLogger(logr.Discard())
	binaries, err := os.MkdirTemp("", "baton-bench-bin-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(binaries)
	build := exec.Command("go", "build", "-o", binaries+"/", "./cmd/baton-controller", "./cmd/baton-node", "./cmd/baton-csi")
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build of the local bed's binaries (run from the checkout): %w: %s", err, out)
	}
	return median(runs, func() error {
		b, err := local.New(local.Options{Binaries: binaries})
		if err != nil {
			return err
		}
		return b.Close()
	})
}

func figure(d time.Duration, err error) string {
	if err != nil {
		return "failed: " + err.Error()
	}
	if d < time.Second {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// median runs f n times and returns the median of its wall times.
func median(n int, f func() error) (time.Duration, error) {
	times := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[n/2], nil
}

// simBedReady builds a simulated world and runs it until both sites can
// place a volume of the applications' shape (on two nodes).
func simBedReady(records bedsim.Records) error {
	w, err := bedsim.New(bedsim.Options{Seed: 1, Records: records})
	if err != nil {
		return err
	}
	ready := func() bool {
		for _, name := range bedsim.SiteNames {
			capacity, err := w.Site(name).API.Capacity(context.Background(), 2)
			if err != nil || capacity == 0 {
				return false
			}
		}
		return true
	}
	if !w.RunUntil(ready, time.Minute) {
		return fmt.Errorf("the sites were not ready within a simulated minute")
	}
	return nil
}

// controlPlaneServes starts the test control plane and stops it again; Start
// returns once the API server serves.
func controlPlaneServes() error {
	cp, err := controlplane.Start(controlplane.Options{})
	if err != nil {
		return err
	}
	return cp.Stop()
}
