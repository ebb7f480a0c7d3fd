// Command baton-hub is baton's hub controller: it deploys site storage through Open Cluster Management.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `Usage: baton-hub [flags]

The hub controller. For every StorageSiteDeployment it carries discovery,
sizing and approval to the managed site through one ManifestWork and reads the
site's draft, StorageCluster and StorageNodes back through ManagedClusterViews.
It never holds a site kubeconfig.

Flags:
`

func main() {
	flags := flag.NewFlagSet("baton-hub", flag.ContinueOnError)
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
	fmt.Fprintln(os.Stderr, "baton-hub: the hub controller has not landed yet (issue 9)")
	os.Exit(1)
}
