// Command baton-csi is baton's CSI driver; it also serves the csi-addons replication service.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

const usage = `Usage: baton-csi [flags]

The CSI driver. It serves CSI Identity, Controller and Node and the
csi-addons Identity and Replication services on a unix socket, resolving every
volume handle along its replication chain to the member an RPC must act on.

Flags:
`

func main() {
	flags := flag.NewFlagSet("baton-csi", flag.ContinueOnError)
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
	fmt.Fprintln(os.Stderr, "baton-csi: the CSI driver has not landed yet (issue 4)")
	os.Exit(1)
}
