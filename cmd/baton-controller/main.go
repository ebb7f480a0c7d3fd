// Command baton-controller is baton's site operator: one per site, leader-elected.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `Usage: baton-controller [flags]

The site operator of one baton site. It owns the site's storage CRDs
(StorageCluster, StorageNode, Volume, Snapshot, Replication, OperatorOps,
ClusterDeploymentConfig, TestFailover), runs their reconcilers around the
storage core, keeps the CSI secret's local cluster entries, and serves the
storage API (HTTPS, bearer token) to its CSI driver and to peer sites.

Flags:
`

func main() {
	flags := flag.NewFlagSet("baton-controller", flag.ContinueOnError)
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), usage)
		flags.PrintDefaults()
	}
	if err := flags.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, "baton-controller: the site operator has not landed yet (issue 5)")
	os.Exit(1)
}
