// Command baton-controller is baton's site operator: one per site, leader-elected.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `Usage: baton-controller [flags]

The site operator of one baton site. It owns the site's storage CRDs
(StorageCluster, StorageNode, Volume, Replica, Snapshot, Replication,
OperatorOps, ClusterDeploymentConfig, TestFailover) in its namespace, runs
their reconcilers around the storage core, ticks the core every second, keeps
the CSI secret's local cluster entries, and serves the storage API (HTTPS,
bearer token) to its CSI driver and to peer sites.

Only the elected leader ticks, reconciles and serves the storage API; a
standby replica waits for the lease. Logs are JSON on stderr; they never
carry a cluster secret.

Flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "baton-controller:", err)
		os.Exit(1)
	}
}

// errUsage reports flags that did not parse (the flag package printed why).
var errUsage = errors.New("usage")

// run parses the flags and runs the operator until ctx ends.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	options, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return serve(ctx, options, stderr)
}
