// Command baton-controller is baton's site operator: one per site, leader-elected.
package main

import (
	"context"
	"io"

	"github.com/baton-dr/baton/internal/command"
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

func main() { command.Main("baton-controller", run) }

// run parses the flags and runs the operator until ctx ends.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	options, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	return serve(ctx, options, stderr)
}
